import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockRequest, refusal, reply, type SentRequest } from '../../support/request-mock.ts';
import { balance, CATALOGUE } from './wallet-fixtures.ts';

const gateway = mockRequest();
const QUOTE = 'POST /acc-1/exchange/pre-calculate';
const quotesAsked = () => gateway.to(QUOTE).map((call) => call.body);

const { $profile } = await import('../../../src/stores/user.ts');
const { $router } = await import('../../../src/stores/router.ts');
const { balancesQuery } = await import('../../../src/stores/balances.ts');
const { catalogueQuery } = await import('../../../src/stores/catalogue.ts');
const home = await import('../../../src/stores/home.ts');
const rules = await import('../../../src/stores/swap.ts');
// One visit of the swap flow for the whole file, as the module's stores were before.
const swap = { ...rules, ...rules.swapFlow.open() };
const { $swapSelection } = swap;

const PAIRS = [
  { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX' },
  { sourceCurrency: 'USDT_TRX', destinationCurrency: 'BTC' },
  { sourceCurrency: 'ETH', destinationCurrency: 'BTC' },
];
const LIMIT = { minLimit: '0.0002', maxLimit: '1.5', currency: 'BTC' };
const quote = (extra: Record<string, unknown> = {}) => ({
  quoteId: 'q-1',
  sourceCurrency: 'BTC',
  destinationCurrency: 'USDT_TRX',
  sourceAmount: '0.001',
  destinationAmount: '64.675',
  fee: '0.325',
  feeCurrency: 'USDT_TRX',
  rate: '64675',
  expiresAt: new Date(Date.now() + 300_000).toISOString(),
  expiresInSeconds: 300,
  ...extra,
});

function signIn(pinCodeActive = false) {
  $profile.set({ data: { email: 'a@b.io', pinCodeActive, tgAuth: false, accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'USD', email: 'a@b.io' }] }, loading: false, error: null });
}

let unbind: (() => void)[] = [];
beforeEach(() => {
  vi.useFakeTimers();
  gateway.on('GET /acc-1/currency-pair', PAIRS);
  for (const pair of PAIRS) gateway.on(`GET /acc-1/limit/${pair.sourceCurrency}/${pair.destinationCurrency}`, LIMIT);
  gateway.on(QUOTE, ({ body }: SentRequest) => {
    const request = body as Record<string, string>;
    return request.sourceAmount ? quote({ sourceAmount: request.sourceAmount }) : quote({ destinationAmount: request.destinationAmount });
  });
  gateway.on('GET /acc-1/asset', [balance('BTC', '0.01'), balance('USDT_TRX', '5')]);
  gateway.on('GET /b2c-wallet/meta-info/coin', CATALOGUE);
  gateway.on('POST /rate', { ratesMap: {} });
  signIn();
  unbind = [swap.$swapProblem.listen(() => {}), swap.$canReverse.listen(() => {}), swap.$canContinue.listen(() => {}), swap.$sourceChoices.listen(() => {})];
});
afterEach(() => {
  for (const u of unbind) u();
  vi.useRealTimers();
  // The answers stay: the visit open for the whole file reads its queries again as soon as they are cleared.
  gateway.clearCalls();
  balancesQuery.clear();
  catalogueQuery.clear();
  swap.pairsQuery.clear();
  swap.limitQuery.clear();
});

describe('swap rules (SPEC §5)', () => {
  it('checks min, then max, then the balance', () => {
    const base = { limit: LIMIT, available: '0.01', currency: 'BTC', ticker: 'BTC' };
    expect(swap.swapProblemOf({ ...base, source: '' })).toBeNull();
    expect(swap.swapProblemOf({ ...base, source: '0' })).toBeNull();
    expect(swap.swapProblemOf({ ...base, source: '0.0001' })).toEqual({ key: 'swap_min_limit_error', params: { amount: '0.0002', currency: 'BTC' } });
    expect(swap.swapProblemOf({ ...base, source: '2' })).toEqual({ key: 'swap_max_limit_error', params: { amount: '1.5', currency: 'BTC' } });
    expect(swap.swapProblemOf({ ...base, source: '0.5' })).toEqual({ key: 'swap_not_enough' });
    expect(swap.swapProblemOf({ ...base, source: '0.01' })).toBeNull();
  });

  it('shows the countdown as minutes:seconds', () => {
    expect(swap.formatCountdown(300)).toBe('5:00');
    expect(swap.formatCountdown(299)).toBe('4:59');
    expect(swap.formatCountdown(61)).toBe('1:01');
    expect(swap.formatCountdown(0)).toBe('0:00');
  });

  it('lists held sources and the destinations of the chosen one', () => {
    const coins = CATALOGUE.crypto;
    expect(swap.sourceChoices(coins, [balance('BTC', '1'), balance('TRX', '1')], PAIRS, []).map((c) => c.coin.currency)).toEqual(['BTC']);
    expect(swap.sourceChoices(coins, [balance('BTC', '1')], PAIRS, ['BTC'])).toEqual([]);
    expect(swap.destinationChoices(coins, [], PAIRS, 'ETH').map((c) => c.coin.currency)).toEqual(['BTC']);
  });
});

describe('the order form', () => {
  it('quotes 300 ms after the last keystroke, by the side typed, and fills the other', async () => {
    $swapSelection.set({ from: 'BTC', to: 'USDT_TRX', fresh: true });
    await vi.advanceTimersByTimeAsync(0);
    swap.typeAmount('source', '0.0');
    swap.typeAmount('source', '0.00');
    swap.typeAmount('source', '0.001');
    await vi.advanceTimersByTimeAsync(299);
    expect(quotesAsked()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(quotesAsked()).toEqual([{ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' }]);
    await vi.advanceTimersByTimeAsync(0);
    // What the user gets shows by USDT's round (2), rounded down (issue 19 item 8).
    expect(swap.$swapForm.get()).toMatchObject({ sourceAmount: '0.001', destinationAmount: '64.67', typed: 'source', quoting: false });
    expect(swap.$canContinue.get()).toBe(true);

    swap.typeAmount('destination', '100,5');
    await vi.advanceTimersByTimeAsync(300);
    expect(quotesAsked()[1]).toEqual({ sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', destinationAmount: '100.5' });
    // Not a number a user may type: not taken.
    swap.typeAmount('source', '1.123456789');
    expect(swap.$swapForm.get().sourceAmount).toBe('0.001');
  });

  it('shows the limit errors and the failed quote', async () => {
    $swapSelection.set({ from: 'BTC', to: 'USDT_TRX', fresh: true });
    swap.typeAmount('source', '0.0001');
    await vi.advanceTimersByTimeAsync(300);
    expect(swap.$swapProblem.get()?.key).toBe('swap_min_limit_error');
    expect(swap.$canContinue.get()).toBe(false);
    swap.typeAmount('source', '3');
    await vi.advanceTimersByTimeAsync(300);
    expect(swap.$swapProblem.get()?.key).toBe('swap_max_limit_error');
    swap.typeAmount('source', '0.5');
    await vi.advanceTimersByTimeAsync(300);
    expect(swap.$swapProblem.get()?.key).toBe('swap_not_enough');
    gateway.once(QUOTE, reply(502));
    swap.typeAmount('source', '0.002');
    await vi.advanceTimersByTimeAsync(300);
    expect(swap.$swapForm.get().quoteFailed).toBe(true);
  });

  it('reverses the pair and the amounts, and disables the arrow without the reverse pair', async () => {
    $swapSelection.set({ from: 'BTC', to: 'USDT_TRX', fresh: true });
    await vi.advanceTimersByTimeAsync(0);
    swap.typeAmount('source', '0.001');
    await vi.advanceTimersByTimeAsync(300);
    expect(swap.$canReverse.get()).toBe(true);
    swap.reversePair();
    expect($swapSelection.get()).toMatchObject({ from: 'USDT_TRX', to: 'BTC' });
    expect(swap.$swapForm.get()).toMatchObject({ sourceAmount: '64.67', destinationAmount: '0.001', typed: 'destination' });
    $swapSelection.set({ from: 'ETH', to: 'BTC', fresh: false });
    expect(swap.$canReverse.get()).toBe(false);
    swap.reversePair();
    expect($swapSelection.get()).toMatchObject({ from: 'ETH', to: 'BTC' });
  });
});

describe('review: 300 s, then Update rate', () => {
  it('counts down, expires, and a fresh quote restarts the countdown', async () => {
    const order = (id: string) => ({ ...quote(), id, state: 'PENDING', createdDate: new Date().toISOString(), transactionId: null });
    gateway.once('POST /acc-1/exchange', order('o-1')).once('POST /acc-1/exchange', order('o-2'));
    gateway.on('POST /acc-1/exchange/cancel/o-1', {});
    $swapSelection.set({ from: 'BTC', to: 'USDT_TRX', fresh: true });
    swap.typeAmount('source', '0.001');
    await vi.advanceTimersByTimeAsync(300);
    await swap.continueToReview();
    expect($router.get()?.route).toBe('swapOrderReview');
    const seconds = swap.$swapSecondsLeft.listen(() => {});
    expect(swap.$swapSecondsLeft.get()).toBe(300);
    await vi.advanceTimersByTimeAsync(1000);
    expect(swap.$swapSecondsLeft.get()).toBe(299);
    await vi.advanceTimersByTimeAsync(299_000);
    expect(swap.$swapSecondsLeft.get()).toBe(0);
    await swap.updateSwapRate();
    expect(gateway.to('POST /acc-1/exchange/cancel/o-1')).toHaveLength(1);
    // Both orders were asked for on the quote for the reviewed amount, each under a key of its own.
    const orders = gateway.to('POST /acc-1/exchange').map((call) => call.body as Record<string, string>);
    expect(orders).toEqual([
      { quoteId: 'q-1', sourceAmount: '0.001', idempotencyKey: expect.any(String) },
      { quoteId: 'q-1', sourceAmount: '0.001', idempotencyKey: expect.any(String) },
    ]);
    expect(orders[0]?.idempotencyKey).not.toBe(orders[1]?.idempotencyKey);
    expect(swap.$swapReview.get()?.order.id).toBe('o-2');
    expect(swap.$swapSecondsLeft.get()).toBe(300);
    seconds();
  });

  it('sends the pincode only when given and hands a wrong one back to the prompt', async () => {
    signIn(true);
    const pending = { ...quote(), id: 'o-9', state: 'PENDING', createdDate: '', transactionId: null };
    swap.$swapReview.set({ order: pending as never, deadline: Date.now() + 300_000, request: { sourceCurrency: 'BTC', destinationCurrency: 'USDT_TRX', sourceAmount: '0.001' }, busy: false, expired: false });
    gateway.once('POST /acc-1/exchange/confirm/o-9', refusal(403, 'B2C_USM0031', 'Incorrect pin code'));
    await expect(swap.confirmSwap('1111')).rejects.toThrow('Incorrect pin code');
    gateway.once('POST /acc-1/exchange/confirm/o-9', { ...pending, state: 'COMPLETED' });
    await swap.confirmSwap('2580');
    expect(gateway.to('POST /acc-1/exchange/confirm/o-9').map((call) => call.headers.pincode)).toEqual(['1111', '2580']);
    expect($router.get()?.route).toBe('swapOrderSuccess');
    expect(swap.$swapResult.get()?.state).toBe('COMPLETED');
  });
});

describe("Home's quick swap path", () => {
  it('goes straight to the order with BTC → USDT_TRX when both are held', async () => {
    const seen = home.$assetRows.listen(() => {});
    await vi.advanceTimersByTimeAsync(0);
    await balancesQuery.refetch('acc-1');
    $swapSelection.set({ from: null, to: null, fresh: true });
    home.openSwapFromHome();
    expect($router.get()?.route).toBe('swapOrder');
    expect($swapSelection.get()).toMatchObject({ from: 'BTC', to: 'USDT_TRX' });
    seen();
  });
});

describe('each currency keeps its display decimals (issue 33 item 3)', () => {
  const coins = { BTC: { round: 8 }, USDT_TRX: { round: 2 }, ETH: { round: 6 } };
  const t = (key: string, params?: Record<string, string | number>) => `${key} ${JSON.stringify(params)}`;
  const q = { sourceCurrency: 'USDT_TRX', destinationCurrency: 'BTC', sourceAmount: '260.66666667', destinationAmount: '0.0040000049' };

  it('fills the untyped side by its own coin: what is paid rounded up, what is got rounded down', () => {
    expect(rules.quotedSide('destination', q, coins)).toEqual({ sourceAmount: '260.67' });
    expect(rules.quotedSide('source', q, coins)).toEqual({ destinationAmount: '0.004' });
    expect(rules.quotedSide('source', { ...q, destinationCurrency: 'ETH', destinationAmount: '1.23456789' }, coins)).toEqual({ destinationAmount: '1.234567' });
  });

  it('shows the rate by the destination coin, and a rate that would round to 0 to 8 decimals', () => {
    const text = (from: string, to: string, rate: string | undefined, toRound: number | undefined) => rules.swapRateText(t as never, { from, to, rate, toRound, locale: 'en' });
    expect(text('BTC', 'USDT_TRX', '64675.123456', 2)).toBe('swap_rate {"from":"BTC","rate":"64,675.12","to":"USDT (TRC-20)"}');
    expect(text('USDT_TRX', 'BTC', '0.0000154623', 8)).toBe('swap_rate {"from":"USDT (TRC-20)","rate":"0.00001546","to":"BTC"}');
    expect(text('TRX', 'USDT_TRX', '0.0012345', 2)).toBe('swap_rate {"from":"TRX","rate":"0.0012345","to":"USDT (TRC-20)"}');
    expect(text('BTC', 'USDT_TRX', undefined, 2)).toBe('swap_rate {"from":"BTC","rate":"…","to":"USDT (TRC-20)"}');
  });
});
