import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { mockRequest, offline, refusal } from '../../support/request-mock.ts';
import { balance, CATALOGUE, RATES } from './wallet-fixtures.ts';

const gateway = mockRequest();
const CHECK = 'POST /acc-1/withdrawal/check-address';
const CAUTION = 'POST /acc-1/address-book/caution';
const FEE_QUOTE = 'POST /acc-1/withdrawal/preliminary/fee';
const WITHDRAW = 'POST /acc-1/withdrawal';
/** The wallet and send calls the form makes around the ones a test looks at. */
function answerTheWallet() {
  gateway.on('GET /b2c-wallet/meta-info/coin', CATALOGUE);
  gateway.on('POST /rate', { ratesMap: RATES });
  gateway.on('GET /acc-1/asset', [balance('BTC', '0.05')]);
  gateway.on('POST /acc-1/asset/transactions', { result: [] });
  gateway.on(CHECK, VALID);
  gateway.on(CAUTION, { caution: null });
  gateway.on('POST /acc-1/address-book/all', { result: [] });
  gateway.on('GET /acc-1/withdrawal', { result: [] });
}

const { $profile } = await import('../../../src/stores/user.ts');
const { balancesQuery } = await import('../../../src/stores/balances.ts');
const { catalogueQuery } = await import('../../../src/stores/catalogue.ts');
const { $router } = await import('../../../src/stores/router.ts');
const { $activeToast, hideToast } = await import('../../../src/stores/toasts.ts');
const rules = await import('../../../src/stores/send.ts');
// One visit of the send flow for the whole file, as the module's stores were before.
const store = { ...rules, ...rules.sendFlow.open() };
const { passcodeErrorText } = await import('../../../src/stores/passcode-entry.ts');
const { scanRegionOf } = await import('../../../src/wallet/ui/qr-scanner.tsx');

const OUTSIDE = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const VALID = { checkResult: 'VALID', belongsToSameUser: false, accountType: 'B2C', internal: false, address: OUTSIDE, network: 'BITCOIN', recipientName: null, saved: false };
const FEE = { currency: 'BTC', feeCurrency: 'BTC', fee: '0.0001', amount: '100', receiveAmount: '99.9999', internal: false, feeQuoteId: null, expiresAt: null };

describe('send rules', () => {
  const base = { address: OUTSIDE, network: 'BITCOIN', chainEnv: 'mainnet' as const, check: undefined, checkedAddress: '', amount: '0.01', balance: '0.05', fee: FEE, ticker: 'BTC' };

  it('checks the address shape at once, then what the server says of it', () => {
    expect(store.sendProblemsOf({ ...base, address: 'bc1-nope' }).address).toBe('send_error_wrong_address');
    expect(store.sendProblemsOf({ ...base, network: 'TRON' }).address).toBe('send_error_wrong_address');
    // A mainnet address where the gateway announces regtest (CHAIN_ENV) is refused at once.
    expect(store.sendProblemsOf({ ...base, chainEnv: 'regtest' }).address).toBe('send_error_wrong_address');
    expect(store.sendProblemsOf(base).address).toBeNull();
    const said = (check: object) => store.sendProblemsOf({ ...base, check: { ...VALID, ...check } as never, checkedAddress: OUTSIDE }).address;
    expect(said({ checkResult: 'INVALID' })).toBe('send_error_wrong_address');
    expect(said({ checkResult: 'BLOCKED' })).toBe('send_error_address_not_used');
    expect(said({ checkResult: 'NOT_USED' })).toBe('send_error_address_not_used');
    expect(said({ belongsToSameUser: true })).toBe('send_error_same_user');
    expect(said({})).toBeNull();
  });

  it('refuses more than the balance and no more than the fee; the whole balance is fine', () => {
    expect(store.sendProblemsOf({ ...base, amount: '0.06' }).amount).toBe('send_error_not_enough_funds');
    expect(store.sendProblemsOf({ ...base, amount: '0.05' }).amount).toBeNull();
    expect(store.sendProblemsOf({ ...base, amount: '0,0001' })).toMatchObject({ amount: 'send_error_below_fee', amountParams: { fee: '0.0001 BTC' } });
    expect(store.sendProblemsOf({ ...base, amount: '0.0001', fee: { ...FEE, fee: '0', internal: true } }).amount).toBeNull();
    expect(store.sendProblemsOf({ ...base, amount: '0' }).amount).toBeNull();
  });

  it('reads addresses out of QR payment links', () => {
    expect(store.addressFromQr(` ${OUTSIDE} `)).toBe(OUTSIDE);
    expect(store.addressFromQr(`bitcoin:${OUTSIDE}?amount=0.1`)).toBe(OUTSIDE);
    expect(store.addressFromQr('ethereum:0x52908400098527886E0F7030069857D2E4169EE7@1')).toBe('0x52908400098527886E0F7030069857D2E4169EE7');
    expect(store.addressFromQr('ton://transfer/EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2?amount=1')).toBe('EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2');
    expect(store.addressFromQr('0:ca6e321c7cce9ecedf0a8ca2492ec8592494aa5fb5ce0387dff96ef6af982a3e')).toBe('0:ca6e321c7cce9ecedf0a8ca2492ec8592494aa5fb5ce0387dff96ef6af982a3e');
  });

  it('scans two-thirds of the smaller video side, centred', () => {
    expect(scanRegionOf(1280, 720)).toEqual({ x: 400, y: 120, width: 480, height: 480 });
  });
});

describe('the send form', () => {
  beforeEach(() => {
    setPlatform(testPlatform({ now: () => Date.now() }));
    gateway.reset();
    for (const query of [balancesQuery, catalogueQuery]) query.clear();
    hideToast();
    answerTheWallet();
    gateway.on(FEE_QUOTE, FEE);
    $profile.set({
      data: { email: 'a@b.io', pinCodeActive: false, tgAuth: false, accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'USD', email: 'a@b.io' }] },
      loading: false,
      error: null,
    });
    $router.open('/home/asset/btc/send');
  });
  afterEach(() => {
    $profile.set({ data: null, loading: false, error: null });
  });

  it('shows continue only once the fee is known, the address valid and the amount above 0; then reviews and sends once', async () => {
    const off = [store.$canContinueSend.listen(() => {}), store.$sendAvailable.listen(() => {}), store.$sendProblems.listen(() => {})];
    store.startSend('BTC');
    await vi.waitFor(() => expect(store.$sendForm.get().fee).toEqual(FEE));
    await vi.waitFor(() => expect(store.$sendAvailable.get()).toBe('0.0499'));
    store.typeSendAmount('12345.123456789');
    expect(store.$sendForm.get().amount).toBe('');
    store.fillMax();
    expect(store.$sendForm.get().amount).toBe('0.05');
    // Max fills the whole balance: the recipient gets it less the network fee (issue 19 item 24).
    const offGets = store.$sendRecipientGets.listen(() => {});
    expect(store.$sendRecipientGets.get()).toBe('0.0499');
    store.typeSendAmount('0,01');
    expect(store.$sendRecipientGets.get()).toBe('0.0099');
    store.typeSendAmount('0');
    expect(store.$sendRecipientGets.get()).toBeNull();
    offGets();
    store.typeSendAmount('0,01');
    expect(store.$canContinueSend.get()).toBe(false);
    store.typeAddress(OUTSIDE);
    expect(store.$canContinueSend.get()).toBe(false);
    await vi.waitFor(() => expect(store.$canContinueSend.get()).toBe(true));
    expect(gateway.expectRequest(CHECK).body).toEqual({ account: 'acc-1', currency: 'BTC', address: OUTSIDE });
    expect(gateway.expectRequest(CAUTION).body).toEqual({ account: 'acc-1', blockchain: 'BITCOIN', address: OUTSIDE });
    expect(gateway.expectRequest(FEE_QUOTE).body).toEqual({ account: 'acc-1', currency: 'BTC', amount: '100', depositAddress: OUTSIDE });

    // Issue 36 item 3: an address the gateway warns of waits for the tick, and a new address asks again.
    gateway.once(CAUTION, { caution: { kind: 'DUST_ONLY' } });
    store.typeAddress(` ${OUTSIDE}`);
    await vi.waitFor(() => expect(store.$sendForm.get().caution).toEqual({ kind: 'DUST_ONLY' }));
    await vi.waitFor(() => expect(store.$sendForm.get().checking).toBe(false));
    expect(store.$canContinueSend.get()).toBe(false);
    store.continueToReview();
    expect($router.get()?.route).toBe('send');
    store.acknowledgeCaution(true);
    expect(store.$canContinueSend.get()).toBe(true);
    store.typeAddress(OUTSIDE);
    expect(store.$sendForm.get()).toMatchObject({ caution: null, cautionAcknowledged: false });
    await vi.waitFor(() => expect(store.$canContinueSend.get()).toBe(true));

    store.continueToReview();
    expect($router.get()?.route).toBe('sendReview');
    expect(store.$sendReview.get()).toMatchObject({ amount: '0.01', receiveAmount: '0.0099', fee: '0.0001', address: OUTSIDE, network: 'Bitcoin' });
    const key = store.$sendReview.get()?.idempotencyKey;

    gateway.once(WITHDRAW, refusal(400, 'WITHDRAWAL_NOT_ENOUGH_FUNDS', 'Not enough funds'));
    await expect(store.confirmSend()).rejects.toThrow();
    expect($activeToast.get()).toMatchObject({ kind: 'error', text: 'Not enough funds' });
    gateway.once(WITHDRAW, { id: 'w-1', account: 'acc-1', currency: 'BTC', amount: '0.01', fee: '0.0001', receiveAmount: '0.0099', depositAddress: OUTSIDE, state: 'IN_PROGRESS', internal: false });
    await store.confirmSend();
    // The retry used the review's key, and no pincode header.
    const withdrawals = gateway.to(WITHDRAW);
    expect(withdrawals).toHaveLength(2);
    expect(withdrawals[1]?.body).toEqual({ account: 'acc-1', pinCode: null, currency: 'BTC', amount: '0.01', depositAddress: OUTSIDE, idempotencyKey: key });
    expect(withdrawals[1]?.body).toEqual(withdrawals[0]?.body);
    expect(withdrawals[1]?.headers).not.toHaveProperty('pincode');
    expect($router.get()?.route).toBe('sendProgress');
    expect(store.$sendProgress.get()?.state).toBe('IN_PROGRESS');
    for (const stop of off) stop();
  });

  it('asks for the passcode when it is on, and a wrong one rejects with its text', async () => {
    $profile.set({ ...$profile.get(), data: { ...($profile.get().data as NonNullable<ReturnType<typeof $profile.get>['data']>), pinCodeActive: true } });
    store.$sendReview.set({ currency: 'BTC', amount: '0.01', receiveAmount: '0.0099', fee: '0.0001', internal: false, address: OUTSIDE, network: 'Bitcoin', recipientName: null, accountType: 'B2C', saved: false, idempotencyKey: 'key-12345', askingPasscode: false, busy: false });
    store.confirmReview();
    expect(store.$sendReview.get()?.askingPasscode).toBe(true);
    expect(gateway.to(WITHDRAW)).toEqual([]);
    gateway.once(WITHDRAW, refusal(403, 'B2C_USM0031', 'Incorrect pin code'));
    const refused = await store.confirmSend('1234').catch((error: unknown) => error);
    // The prompt shows the gateway's own text for it (not the generic one).
    expect(passcodeErrorText(refused)).toBe('Incorrect pin code');
    const sent = gateway.expectRequest(WITHDRAW);
    expect(sent.body).toMatchObject({ idempotencyKey: 'key-12345' });
    expect(sent.headers.pincode).toBe('1234');
    expect(store.$sendReview.get()?.askingPasscode).toBe(true);
  });

  it('says pasted and scanned', async () => {
    store.startSend('BTC');
    await store.pasteAddress(async () => ` ${OUTSIDE}\n`);
    expect(store.$sendForm.get().address).toBe(OUTSIDE);
    expect($activeToast.get()).toMatchObject({ kind: 'success', text: 'Address pasted' });
    store.openScanner();
    store.scannedAddress(`bitcoin:${OUTSIDE}`);
    expect(store.$sendForm.get()).toMatchObject({ address: OUTSIDE, scannerOpen: false });
    expect($activeToast.get()?.text).toBe('Address scanned');
    store.openScanner();
    store.closeScanner(true);
    expect(store.$sendForm.get().scannerOpen).toBe(false);
    expect($activeToast.get()).toMatchObject({ kind: 'error', text: 'The camera is not available' });
  });
});

describe('the fee quote of a send', () => {
  const REVIEW = { currency: 'BTC', amount: '0.01', receiveAmount: '0.0099', fee: '0.0001', internal: false, address: OUTSIDE, network: 'Bitcoin', recipientName: null, accountType: 'B2C' as const, saved: false, idempotencyKey: 'key-quote-1', askingPasscode: false, busy: false };
  const SENT = { id: 'w-2', account: 'acc-1', currency: 'BTC', amount: '0.01', fee: '0.0001', receiveAmount: '0.0099', depositAddress: OUTSIDE, state: 'IN_PROGRESS', internal: false };
  const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
  const sentWith = () => gateway.to(WITHDRAW).at(-1)?.body as Record<string, unknown> | undefined;

  beforeEach(() => {
    setPlatform(testPlatform({ now: () => Date.now() }));
    gateway.reset();
    for (const query of [balancesQuery, catalogueQuery]) query.clear();
    hideToast();
    answerTheWallet();
    gateway.on(WITHDRAW, SENT);
    $profile.set({
      data: { email: 'a@b.io', pinCodeActive: false, tgAuth: false, accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'USD', email: 'a@b.io' }] },
      loading: false,
      error: null,
    });
    $router.open('/home/asset/btc/send');
  });
  afterEach(() => {
    $profile.set({ data: null, loading: false, error: null });
  });

  it('reviews the fee the form showed and sends the quote that fixed it', async () => {
    gateway.on(FEE_QUOTE, { ...FEE, feeQuoteId: 'q-1', expiresAt: inSeconds(300) });
    const off = store.$canContinueSend.listen(() => {});
    store.startSend('BTC');
    store.typeSendAmount('0.01');
    store.typeAddress(OUTSIDE);
    await vi.waitFor(() => expect(store.$canContinueSend.get()).toBe(true));
    store.continueToReview();
    expect(store.$sendReview.get()).toMatchObject({ fee: '0.0001', feeQuoteId: 'q-1' });
    await store.confirmSend();
    expect(sentWith()).toMatchObject({ feeQuoteId: 'q-1', amount: '0.01', depositAddress: OUTSIDE });
    expect(gateway.to(FEE_QUOTE)).toHaveLength(1);
    off();
  });

  it('asks again for a lapsed quote: the same fee is sent with the new quote, a changed one is shown before anything is sent', async () => {
    store.$sendReview.set({ ...REVIEW, feeQuoteId: 'q-old', feeQuoteExpiresAt: inSeconds(5), requested: false });
    gateway.once(FEE_QUOTE, { ...FEE, feeQuoteId: 'q-same', expiresAt: inSeconds(300) });
    await store.confirmSend();
    expect(gateway.expectRequest(FEE_QUOTE).body).toEqual({ account: 'acc-1', currency: 'BTC', amount: '100', depositAddress: OUTSIDE });
    expect(sentWith()).toMatchObject({ feeQuoteId: 'q-same', idempotencyKey: 'key-quote-1' });

    gateway.clearCalls();
    store.$sendReview.set({ ...REVIEW, idempotencyKey: 'key-quote-2', feeQuoteId: 'q-old', feeQuoteExpiresAt: inSeconds(-60), requested: false });
    gateway.once(FEE_QUOTE, { ...FEE, fee: '0.0002', receiveAmount: '99.9998', feeQuoteId: 'q-new', expiresAt: inSeconds(300) });
    await store.confirmSend();
    expect(gateway.to(WITHDRAW)).toEqual([]);
    expect(store.$sendReview.get()).toMatchObject({ fee: '0.0002', receiveAmount: '0.0098', feeQuoteId: 'q-new', busy: false, askingPasscode: false });
    expect($activeToast.get()).toMatchObject({ kind: 'error', text: 'The network fee has changed. Check the new fee and confirm again.' });
    // Confirmed again, knowing the fee: sent with the quote behind it.
    await store.confirmSend();
    expect(sentWith()).toMatchObject({ feeQuoteId: 'q-new', idempotencyKey: 'key-quote-2' });
  });

  it('never changes a request once asked for under its key, and renews after a plain refusal', async () => {
    // The answer was lost: the retry must be the same request, quote included, or the key would be refused.
    store.$sendReview.set({ ...REVIEW, feeQuoteId: 'q-kept', feeQuoteExpiresAt: inSeconds(-60), requested: true });
    await store.confirmSend();
    expect(gateway.to(FEE_QUOTE)).toEqual([]);
    expect(sentWith()).toMatchObject({ feeQuoteId: 'q-kept' });

    store.$sendReview.set({ ...REVIEW, idempotencyKey: 'key-quote-3', feeQuoteId: 'q-a', feeQuoteExpiresAt: inSeconds(300), requested: false });
    gateway.once(WITHDRAW, refusal(400, 'WITHDRAWAL_NOT_ENOUGH_FUNDS', 'Not enough funds'));
    await expect(store.confirmSend()).rejects.toThrow();
    expect(store.$sendReview.get()?.requested).toBe(false);
    gateway.once(WITHDRAW, offline());
    await expect(store.confirmSend()).rejects.toThrow();
    expect(store.$sendReview.get()?.requested).toBe(true);
  });

  it('sends no quote for a review without one (another user of the wallet, or kept from before quotes)', async () => {
    store.$sendReview.set({ ...REVIEW, fee: '0', receiveAmount: '0.01', internal: true });
    await store.confirmSend();
    expect(sentWith()).not.toHaveProperty('feeQuoteId');
    expect(gateway.to(FEE_QUOTE)).toEqual([]);
  });
});
