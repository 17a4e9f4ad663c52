import { atom, computed, map } from 'nanostores';
import { openPage } from '@nanostores/router';
import { platform } from '../platform/platform.ts';
import { addAddressBookEntry, checkAddress, createWithdrawal, getPreliminaryFee, type AddressCheck, type FeeView, type WithdrawalView } from '../api/send.ts';
import { toWalletError } from '../api/errors.ts';
import { isAddressShapeValid } from '../lib/address.ts';
import { compareDecimals, displayDecimal, parseDecimal, formatUnits } from '../lib/amount.ts';
import { decimalsOf, type ChainEnv, type CoinMeta } from '../lib/currencies.ts';
import { newIdempotencyKey } from '../lib/idempotency-key.ts';
import { acceptTypedAmount, isZeroAmount, normalTypedAmount } from '../lib/typed-amount.ts';
import type { MessageKey } from '../lib/text.ts';
import { $accountId } from './account.ts';
import { $assetCurrency } from './asset.ts';
import { addressBookQuery } from './address-book.ts';
import { $balances, refreshBalances } from './balances.ts';
import { $coins } from './catalogue.ts';
import { $chainEnv } from './client-config.ts';
import { errorText, showErrorToast } from './errors.ts';
import { isPasscodeRefusal, passcodeStep } from './passcode-entry.ts';
import { $t } from './i18n.ts';
import { createDebouncedRequest } from './primitives/debounced-request.ts';
import { createFlow } from './primitives/flow.ts';
import { createResume } from './primitives/resume.ts';
import { $router } from './router.ts';
import { showToast } from './toasts.ts';
import { watchWithdrawal, $withdrawalUpdates } from './withdrawal-watch.ts';

/** SPEC §9: address checks and fee requests wait 300 ms after the last keystroke. */
export const SEND_DEBOUNCE_MS = 300;

export type SendForm = {
  currency: string | null;
  amount: string;
  address: string;
  /** The server's check of `checkedAddress`; stale when the address changed since. */
  check: AddressCheck | undefined;
  checkedAddress: string;
  /** The fee for `feeAddress` ('' = no address yet: the network's fee). */
  fee: FeeView | undefined;
  feeAddress: string | null;
  checking: boolean;
  checkFailed: boolean;
  /** Why the check or the fee failed, in the user's words (a network that is not answering names it). */
  checkError: string | undefined;
  scannerOpen: boolean;
  pickerOpen: boolean;
  submitting: boolean;
};

const EMPTY: SendForm = {
  currency: null,
  amount: '',
  address: '',
  check: undefined,
  checkedAddress: '',
  fee: undefined,
  feeAddress: null,
  checking: false,
  checkFailed: false,
  checkError: undefined,
  scannerOpen: false,
  pickerOpen: false,
  submitting: false,
};

const tickerOf = (coin: CoinMeta | undefined, currency: string | null) => coin?.baseCurrency ?? currency ?? '';

/** What a QR code holds: a bare address, or a payment URI (bitcoin:…?amount=, ethereum:…@1, ton://transfer/…). */
export function addressFromQr(text: string): string {
  const value = text.trim();
  const ton = /^ton:\/\/transfer\/([^?#]+)/i.exec(value);
  if (ton?.[1]) return decodeURIComponent(ton[1]);
  const withoutScheme = value.replace(/^[a-z][a-z0-9+.-]*:(?:\/\/)?/i, '');
  return withoutScheme.split(/[?@#]/)[0] ?? '';
}

export type SendProblems = { address: MessageKey | null; amount: MessageKey | null; amountParams?: Record<string, string> };

/** SPEC §5 send rules, in the order the user meets them. */
export function sendProblemsOf(input: { address: string; network: string | undefined; chainEnv: ChainEnv; check: AddressCheck | undefined; checkedAddress: string; amount: string; balance: string; fee: FeeView | undefined; ticker: string }): SendProblems {
  const address = input.address.trim();
  let addressProblem: MessageKey | null = null;
  if (address !== '' && input.network && !isAddressShapeValid(input.network, address, input.chainEnv)) addressProblem = 'send_error_wrong_address';
  else if (input.check && input.checkedAddress === address) {
    if (input.check.checkResult === 'INVALID') addressProblem = 'send_error_wrong_address';
    else if (input.check.checkResult === 'BLOCKED' || input.check.checkResult === 'NOT_USED') addressProblem = 'send_error_address_not_used';
    else if (input.check.belongsToSameUser) addressProblem = 'send_error_same_user';
  }
  const amount = normalTypedAmount(input.amount);
  if (!/^\d+(\.\d+)?$/.test(amount) || isZeroAmount(amount)) return { address: addressProblem, amount: null };
  if (compareDecimals(amount, input.balance) > 0) return { address: addressProblem, amount: 'send_error_not_enough_funds' };
  if (input.fee && !input.fee.internal && !isZeroAmount(input.fee.fee) && compareDecimals(amount, input.fee.fee) <= 0) {
    return { address: addressProblem, amount: 'send_error_below_fee', amountParams: { fee: `${input.fee.fee} ${input.ticker}` } };
  }
  return { address: addressProblem, amount: null };
}

export type SendReview = {
  currency: string;
  amount: string;
  receiveAmount: string;
  fee: string;
  internal: boolean;
  address: string;
  network: string;
  recipientName: string | null;
  accountType: 'B2C' | 'B2B';
  saved: boolean;
  /** One key per review: confirming again after a lost answer cannot send twice. */
  idempotencyKey: string;
  /** The quote that fixed `fee` (FeeView.feeQuoteId) and when it lapses; absent on reviews kept from before quotes. */
  feeQuoteId?: string | null;
  feeQuoteExpiresAt?: string | null;
  /** Set once the withdrawal was asked for: from then on its request, quote included, never changes under its key. */
  requested?: boolean;
  /** The passcode step shows instead of the summary. */
  askingPasscode: boolean;
  busy: boolean;
};

export type SaveRecipient = { open: boolean; name: string; busy: boolean; saved: boolean };

/** A fee quote is renewed this long before the gateway's expiry: the clocks and the request's way there differ. */
export const FEE_QUOTE_MARGIN_MS = 10_000;

/** A refusal of the request itself (4xx, passcode ones included): no withdrawal exists under its key. */
function refusedOutright(error: unknown): boolean {
  const failure = toWalletError(error);
  return failure.fromServer && (failure.status ?? 500) < 500 && failure.code !== 'IDEMPOTENCY_KEY_IN_USE' && failure.code !== 'IDEMPOTENCY_KEY_REUSED';
}

/** Whether the review's fee quote has lapsed and may still be renewed (never once the withdrawal was asked for). */
export function feeQuoteLapsed(review: Pick<SendReview, 'feeQuoteId' | 'feeQuoteExpiresAt' | 'requested'>, now: number): boolean {
  if (!review.feeQuoteId || !review.feeQuoteExpiresAt || review.requested) return false;
  return Date.parse(review.feeQuoteExpiresAt) - FEE_QUOTE_MARGIN_MS <= now;
}

/** What a reload on the review or the in-progress screen brings back (issue 19 item 14). */
type SendResume = { review: SendReview | null; result: WithdrawalView | null };
const sendResume = createResume<SendResume>('send');

/** The send flow (SPEC §2, §4): form, review, in progress, for the asset of the route; one visit's state, guards and cleanup. */
export const sendFlow = createFlow(['send', 'sendReview', 'sendProgress'], (scope) => {
  const $sendForm = map<SendForm>({ ...EMPTY });

  const $sendCoin = computed([$sendForm, $coins], (form, coins): CoinMeta | undefined => (form.currency ? coins[form.currency] : undefined));
  const $sendBalance = computed([$sendForm, $balances], (form, balances) => balances.data?.find((item) => item.currency === form.currency)?.totalAvailable ?? '0');

  type CheckInput = { account: string; currency: string; address: string; wellFormed: boolean };

  // The fee depends on who receives: none to another user of this wallet.
  const checks = createDebouncedRequest({
    delayMs: SEND_DEBOUNCE_MS,
    load: async ({ account, currency, address, wellFormed }: CheckInput, signal) => {
      const check = wellFormed ? await checkAddress(account, currency, address, signal) : undefined;
      const usable = check?.checkResult === 'VALID' ? address : undefined;
      const fee = await getPreliminaryFee(account, currency, usable, signal);
      return { check, fee, usable };
    },
    onResult: ({ check, fee, usable }, { address, wellFormed }) =>
      $sendForm.set({ ...$sendForm.get(), check, checkedAddress: wellFormed ? address : '', fee, feeAddress: usable ?? '', checking: false }),
    onError: (error) => $sendForm.set({ ...$sendForm.get(), checking: false, checkFailed: true, checkError: errorText(error, { fallback: 'common_something_went_wrong' }) }),
  });

  /** Starts the form for the asset of the route, once per asset: coming back from the review keeps what was typed. */
  function startSend(currency: string): void {
    if ($sendForm.get().currency === currency) return;
    checks.cancel();
    $sendForm.set({ ...EMPTY, currency });
    scheduleChecks(0);
  }

  /** The fee (and, for a well-formed address, the server's check) for what the form holds now; the newest answer wins. */
  function scheduleChecks(delay = SEND_DEBOUNCE_MS): void {
    checks.cancel();
    const form = $sendForm.get();
    const account = $accountId.get();
    const coin = $sendCoin.get();
    if (!account || !form.currency) return;
    const address = form.address.trim();
    const wellFormed = address !== '' && (!coin || isAddressShapeValid(coin.network, address, $chainEnv.get()));
    $sendForm.set({ ...form, checking: wellFormed, checkFailed: false, checkError: undefined });
    checks.schedule({ account, currency: form.currency, address, wellFormed }, delay);
  }

  /** SPEC §5: digits, an optional point or comma, at most 8 digits either side; anything else is not taken. */
  function typeSendAmount(typed: string): void {
    const text = acceptTypedAmount(typed);
    if (text === undefined) return;
    $sendForm.setKey('amount', text);
  }

  /** SPEC §5: max fills the whole balance (to 8 decimals at most, rounded down). */
  function fillMax(): void {
    const balance = $sendBalance.get();
    $sendForm.setKey('amount', isZeroAmount(balance) ? '0' : displayDecimal(balance, 8, 'down'));
  }

  function typeAddress(text: string): void {
    $sendForm.set({ ...$sendForm.get(), address: text, check: undefined, checkedAddress: '' });
    scheduleChecks();
  }

  /** Pasted from the clipboard (SPEC §8 toast 'address pasted'). */
  async function pasteAddress(read: () => Promise<string>): Promise<void> {
    try {
      const text = (await read()).trim();
      if (!text) return;
      typeAddress(text);
      showToast($t.get()('send_address_pasted'));
    } catch {
      showToast($t.get()('common_something_went_wrong'), 'error');
    }
  }

  function openScanner(): void {
    $sendForm.setKey('scannerOpen', true);
  }

  /** SPEC §8: a camera that is unavailable closes the scanner and returns to the form. */
  function closeScanner(unavailable = false): void {
    $sendForm.setKey('scannerOpen', false);
    if (unavailable) showToast($t.get()('send_camera_unavailable'), 'error');
  }

  /** A code was read (SPEC §8 toast 'address scanned'). */
  function scannedAddress(text: string): void {
    const address = addressFromQr(text);
    $sendForm.setKey('scannerOpen', false);
    if (!address) return;
    typeAddress(address);
    showToast($t.get()('send_address_scanned'));
  }

  function togglePicker(open: boolean): void {
    $sendForm.setKey('pickerOpen', open);
  }

  function pickAddress(address: string): void {
    $sendForm.setKey('pickerOpen', false);
    typeAddress(address);
  }

  /** The saved addresses on the asset's network, for the picker. */
  const $sendBookEntries = computed([addressBookQuery.watch($accountId), $sendCoin], (book, coin) => (book.data ?? []).filter((entry) => !coin || entry.blockchain === coin.network));

  const $sendProblems = computed([$sendForm, $sendCoin, $sendBalance, $chainEnv], (form, coin, balance, chainEnv) =>
    sendProblemsOf({ address: form.address, network: coin?.network, chainEnv, check: form.check, checkedAddress: form.checkedAddress, amount: form.amount, balance, fee: form.fee, ticker: tickerOf(coin, form.currency) }),
  );

  /** Balance less the fee, never below 0 (SPEC §5 'available amount'). */
  const $sendAvailable = computed([$sendForm, $sendBalance, $sendCoin], (form, balance, coin) => {
    const decimals = coin?.decimals ?? (form.currency ? decimalsOf(form.currency) : undefined);
    // No known currency, nothing to send: its decimals are never guessed.
    if (decimals === undefined) return '0';
    const fee = form.fee && !form.fee.internal ? parseDecimal(form.fee.fee, decimals) : 0n;
    const units = parseDecimal(balance, decimals) - fee;
    return formatUnits(units > 0n ? units : 0n, decimals);
  });

  /** What the recipient gets for the amount typed: the amount less the network fee (issue 19 item 24); null until both are known. */
  const $sendRecipientGets = computed([$sendForm, $sendCoin], (form, coin) => {
    const amount = normalTypedAmount(form.amount);
    if (!coin || !form.fee || !/^\d+(\.\d+)?$/.test(amount) || isZeroAmount(amount)) return null;
    const units = parseDecimal(amount, coin.decimals) - (form.fee.internal ? 0n : parseDecimal(form.fee.fee, coin.decimals));
    return units > 0n ? formatUnits(units, coin.decimals) : null;
  });

  /** SPEC §4: the confirm button only when the fee is known, the address valid, no address error and the amount above 0. */
  const $canContinueSend = computed([$sendForm, $sendProblems], (form, problems) => {
    const address = form.address.trim();
    const amount = normalTypedAmount(form.amount);
    return (
      !!form.fee &&
      form.feeAddress === address &&
      form.check?.checkResult === 'VALID' &&
      form.checkedAddress === address &&
      !form.checking &&
      problems.address === null &&
      problems.amount === null &&
      /^\d+(\.\d+)?$/.test(amount) &&
      !isZeroAmount(amount)
    );
  });

  const $sendReview = atom<SendReview | null>(null);

  function continueToReview(): void {
    const form = $sendForm.get();
    const coin = $sendCoin.get();
    if (!$canContinueSend.get() || !form.currency || !form.fee || !form.check || !coin) return;
    const amount = normalTypedAmount(form.amount);
    const decimals = coin.decimals;
    const fee = form.fee.internal ? 0n : parseDecimal(form.fee.fee, decimals);
    $sendReview.set({
      currency: form.currency,
      amount,
      receiveAmount: formatUnits(parseDecimal(amount, decimals) - fee, decimals),
      fee: formatUnits(fee, decimals),
      internal: form.check.internal,
      address: form.check.address,
      network: coin.blockchain,
      recipientName: form.check.recipientName,
      accountType: form.check.accountType,
      saved: form.check.saved,
      idempotencyKey: newIdempotencyKey(),
      feeQuoteId: form.fee.feeQuoteId ?? null,
      feeQuoteExpiresAt: form.fee.expiresAt ?? null,
      requested: false,
      askingPasscode: false,
      busy: false,
    });
    openPage($router, 'sendReview', { currency: form.currency });
  }

  /** The review's confirm: with an active passcode it asks for it first (SPEC §2, §6). */
  const { confirm: confirmReview, cancel: cancelPasscode } = passcodeStep($sendReview, () => confirmSend());

  const $sendResult = atom<WithdrawalView | null>(null);

  /**
   * A fresh fee for a review whose quote lapsed: the review with the new quote when the fee is the same, else
   * undefined after the review shows the new fee (the user confirms again, knowing what they pay).
   */
  async function renewFee(account: string, review: SendReview): Promise<SendReview | undefined> {
    const fresh = await getPreliminaryFee(account, review.currency, review.address);
    const decimals = $coins.get()[review.currency]?.decimals ?? decimalsOf(review.currency);
    // No known currency: its decimals are never guessed, and the gateway charges the current fee.
    if (decimals === undefined) return review;
    const fee = fresh.internal ? 0n : parseDecimal(fresh.fee, decimals);
    const left = parseDecimal(review.amount, decimals) - fee;
    const renewed: SendReview = {
      ...review,
      fee: formatUnits(fee, decimals),
      receiveAmount: formatUnits(left > 0n ? left : 0n, decimals),
      internal: fresh.internal,
      feeQuoteId: fresh.feeQuoteId,
      feeQuoteExpiresAt: fresh.expiresAt,
    };
    if (fee === parseDecimal(review.fee, decimals) && fresh.internal === review.internal) return renewed;
    $sendReview.set({ ...renewed, busy: false, askingPasscode: false });
    showToast($t.get()('send_fee_changed'), 'error');
    return undefined;
  }

  /**
   * POST withdrawal; the pincode header goes only when one was entered. A wrong passcode rejects with its text (the
   * prompt clears and shows it); any other refusal shows the server's message in an error toast (SPEC §8). A review
   * whose fee quote lapsed asks for the fee again first, so what is charged is what the review shows.
   */
  async function confirmSend(pincode?: string): Promise<void> {
    let review = $sendReview.get();
    const account = $accountId.get();
    if (!review || !account || review.busy) return;
    $sendReview.set({ ...review, busy: true });
    try {
      if (feeQuoteLapsed(review, platform().now())) {
        const renewed = await renewFee(account, review);
        if (!renewed) return;
        review = renewed;
      }
      review = { ...review, requested: true };
      $sendReview.set({ ...review, busy: true });
      const feeQuote = review.feeQuoteId ? { feeQuoteId: review.feeQuoteId } : {};
      const withdrawal = await createWithdrawal(
        account,
        { currency: review.currency, amount: review.amount, depositAddress: review.address, idempotencyKey: review.idempotencyKey, ...feeQuote },
        pincode || undefined,
      );
      $sendResult.set(withdrawal);
      $sendReview.set({ ...review, busy: false, askingPasscode: false });
      watchWithdrawal(withdrawal);
      // The next send starts afresh.
      checks.cancel();
      $sendForm.set({ ...EMPTY });
      void refreshBalances();
      openPage($router, 'sendProgress', { currency: review.currency });
    } catch (error) {
      // A plain refusal created nothing under the key: the request may change again (a lapsed quote renewed).
      if (refusedOutright(error)) review = { ...review, requested: false };
      $sendReview.set({ ...review, busy: false });
      // The prompt reads the code (B2C_USM0032 offers the reset) and shows the gateway's own text: pass the error on as is.
      if (pincode !== undefined && isPasscodeRefusal(error)) throw error;
      $sendReview.set({ ...review, busy: false, askingPasscode: false });
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
      throw error;
    }
  }

  /** The in-progress screen follows the withdrawal to its end. */
  const $sendProgress = computed([$sendResult, $withdrawalUpdates], (result, updates) => (result ? (updates[result.id] ?? result) : null));

  const $saveRecipient = map<SaveRecipient>({ open: false, name: '', busy: false, saved: false });
  function openSaveRecipient(open: boolean): void {
    $saveRecipient.set({ ...$saveRecipient.get(), open });
  }

  function typeRecipientName(name: string): void {
    $saveRecipient.setKey('name', name);
  }

  /** SPEC §2: the in-progress screen adds the recipient to the address book when it is not saved yet. */
  async function saveRecipient(): Promise<void> {
    const state = $saveRecipient.get();
    const review = $sendReview.get();
    const result = $sendResult.get();
    const account = $accountId.get();
    const coin = result ? $coins.get()[result.currency] : undefined;
    if (!account || !result || !coin || state.busy || !state.name.trim()) return;
    $saveRecipient.set({ ...state, busy: true });
    try {
      await addAddressBookEntry(account, { name: state.name.trim(), blockchain: coin.network, address: review?.address ?? result.depositAddress });
      $saveRecipient.set({ open: false, name: '', busy: false, saved: true });
      showToast($t.get()('address_book_added'));
      void addressBookQuery.refetch(account);
    } catch (error) {
      $saveRecipient.set({ ...$saveRecipient.get(), busy: false });
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
    }
  }

  // The review (with its idempotency key: confirming again cannot send twice) and the withdrawal on its way survive a reload.
  const entry = $router.get()?.route;
  if (entry === 'sendReview' || entry === 'sendProgress') {
    const stop = sendResume.restore(
      $accountId,
      (kept) => {
        if (kept.review) $sendReview.set({ ...kept.review, busy: false, askingPasscode: false });
        if (kept.result) {
          $sendResult.set(kept.result);
          watchWithdrawal(kept.result);
        }
      },
      () => {
        $sendReview.set(null);
        $sendResult.set(null);
      },
    );
    scope.onLeave(stop);
  } else sendResume.clear();
  const saveSend = () => {
    const review = $sendReview.get();
    const result = $sendResult.get();
    sendResume.save($accountId.get(), review || result ? { review, result } : undefined);
  };
  scope.follow($sendReview, saveSend);
  scope.follow($sendResult, saveSend);
  scope.onLeave(() => sendResume.clear());

  // A new review starts with the save offer closed.
  scope.follow($sendReview, (review) => {
    if (review && !review.busy && !review.askingPasscode) $saveRecipient.set({ open: false, name: '', busy: false, saved: review.saved });
  });
  // The send form follows the asset of the route.
  const followRoute = (page: ReturnType<typeof $router.get>) => {
    const currency = $assetCurrency.get();
    if (page?.route === 'send' && currency) startSend(currency);
  };
  followRoute($router.get());
  scope.follow($router, followRoute);
  scope.onLeave(() => checks.cancel());
  // Opened without a form or a withdrawal behind it (a reload): back to the form, or to the asset.
  scope.guard([$assetCurrency, $sendReview], (page) => {
    const currency = $assetCurrency.get();
    const review = $sendReview.get();
    return page.route === 'sendReview' && currency && (!review || review.currency !== currency) ? { route: 'send', params: { currency } } : undefined;
  });
  scope.guard([$assetCurrency, $sendProgress], (page) => {
    const currency = $assetCurrency.get();
    const withdrawal = $sendProgress.get();
    return page.route === 'sendProgress' && currency && (!withdrawal || withdrawal.currency !== currency) ? { route: 'asset', params: { currency } } : undefined;
  });

  return {
    $sendForm,
    $sendCoin,
    $sendBalance,
    $sendBookEntries,
    $sendProblems,
    $sendAvailable,
    $sendRecipientGets,
    $canContinueSend,
    $sendReview,
    $sendResult,
    $sendProgress,
    $saveRecipient,
    startSend,
    typeSendAmount,
    fillMax,
    typeAddress,
    pasteAddress,
    openScanner,
    closeScanner,
    scannedAddress,
    togglePicker,
    pickAddress,
    continueToReview,
    confirmReview,
    cancelPasscode,
    confirmSend,
    openSaveRecipient,
    typeRecipientName,
    saveRecipient,
  };
});

export type SendVisit = ReturnType<typeof sendFlow.open>;
