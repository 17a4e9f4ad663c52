// The send form's amount and the gateway's word on what is typed (SPEC §5): the fee for the address, the server's
// check of it and why it may be a poisoned one; what the form allows to continue with.
import { computed, map } from 'nanostores';
import { checkAddress, getAddressCaution, getPreliminaryFee } from '../../api/send.ts';
import { isAddressShapeValid } from '../../lib/address.ts';
import { displayDecimal, formatUnits, parseDecimal } from '../../lib/amount.ts';
import { decimalsOf, type CoinMeta } from '../../lib/currencies.ts';
import { acceptTypedAmount, isZeroAmount, normalTypedAmount } from '../../lib/typed-amount.ts';
import { $accountId } from '../account.ts';
import { $balances } from '../balances.ts';
import { $coins } from '../catalogue.ts';
import { $chainEnv } from '../client-config.ts';
import { errorText } from '../errors.ts';
import { createDebouncedRequest } from '../primitives/debounced-request.ts';
import { EMPTY_SEND_FORM, SEND_DEBOUNCE_MS, sendProblemsOf, tickerOf, type SendForm } from './rules.ts';

export function createSendForm() {
  const $sendForm = map<SendForm>({ ...EMPTY_SEND_FORM });

  const $sendCoin = computed([$sendForm, $coins], (form, coins): CoinMeta | undefined => (form.currency ? coins[form.currency] : undefined));
  const $sendBalance = computed([$sendForm, $balances], (form, balances) => balances.data?.find((item) => item.currency === form.currency)?.totalAvailable ?? '0');

  type CheckInput = { account: string; currency: string; network: string | undefined; address: string; wellFormed: boolean };

  // The fee depends on who receives: none to another user of this wallet.
  const checks = createDebouncedRequest({
    delayMs: SEND_DEBOUNCE_MS,
    load: async ({ account, currency, network, address, wellFormed }: CheckInput, signal) => {
      const [check, caution] = wellFormed
        ? await Promise.all([checkAddress(account, currency, address, signal), network ? getAddressCaution(account, network, address, signal) : undefined])
        : [undefined, undefined];
      const usable = check?.checkResult === 'VALID' ? address : undefined;
      const fee = await getPreliminaryFee(account, currency, usable, signal);
      return { check, caution: caution?.caution ?? null, fee, usable };
    },
    onResult: ({ check, caution, fee, usable }, { address, wellFormed }) =>
      $sendForm.set({ ...$sendForm.get(), check, checkedAddress: wellFormed ? address : '', caution, cautionAcknowledged: false, fee, feeAddress: usable ?? '', checking: false }),
    onError: (error) => $sendForm.set({ ...$sendForm.get(), checking: false, checkFailed: true, checkError: errorText(error, { fallback: 'common_something_went_wrong' }) }),
  });

  /** Starts the form for the asset of the route, once per asset: coming back from the review keeps what was typed. */
  function startSend(currency: string): void {
    if ($sendForm.get().currency === currency) return;
    checks.cancel();
    $sendForm.set({ ...EMPTY_SEND_FORM, currency });
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
    checks.schedule({ account, currency: form.currency, network: coin?.network, address, wellFormed }, delay);
  }

  /** The next send starts afresh. */
  function resetSendForm(): void {
    checks.cancel();
    $sendForm.set({ ...EMPTY_SEND_FORM });
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
      (!form.caution || form.cautionAcknowledged) &&
      !form.checking &&
      problems.address === null &&
      problems.amount === null &&
      /^\d+(\.\d+)?$/.test(amount) &&
      !isZeroAmount(amount)
    );
  });

  return {
    $sendForm,
    $sendCoin,
    $sendBalance,
    $sendProblems,
    $sendAvailable,
    $sendRecipientGets,
    $canContinueSend,
    startSend,
    scheduleChecks,
    resetSendForm,
    cancelChecks: () => checks.cancel(),
    typeSendAmount,
    fillMax,
  };
}

export type SendFormStep = ReturnType<typeof createSendForm>;
