// The crypto sold and how much (SPEC §2 /sell/pay, /sell/order, §5): the asset (added to the account first when it
// lacks it), the limits, the fixed rate with its countdown and the saved cards, the amount checked against them.
import { atom, computed, onMount } from 'nanostores';
import { openPage } from '@nanostores/router';
import { getSavedCards, getSellLimits, getSellRate } from '../../api/sell.ts';
import { acceptTypedAmount } from '../../lib/typed-amount.ts';
import { decimalsOf, type CoinMeta } from '../../lib/currencies.ts';
import { platform } from '../../platform/platform.ts';
import { $accountId } from '../account.ts';
import { $balances, addCurrencies } from '../balances.ts';
import { $coins } from '../catalogue.ts';
import { $t } from '../i18n.ts';
import { createCountdown } from '../primitives/countdown.ts';
import { $router } from '../router.ts';
import { showToast } from '../toasts.ts';
import { checkSellAmount, SELL_FIAT, type AmountCheck, type SellTerms } from './rules.ts';

/** `resetFlow`: another asset starts the amount, the card and the review again. */
export function createSellAmount({ resetFlow }: { resetFlow: () => void }) {
  const $sellCurrency = atom<string | null>(null);
  const $sellAmount = atom('');
  const $sellTerms = atom<SellTerms>({ loading: false, failed: false, cards: [] });
  const $sellChoosing = atom<string | null>(null);

  const $sellCoin = computed([$sellCurrency, $coins], (currency, coins): CoinMeta | undefined => (currency ? coins[currency] : undefined));
  const $sellAvailable = computed([$sellCurrency, $balances], (currency, balances) => balances.data?.find((item) => item.currency === currency)?.totalAvailable ?? '0');

  const $sellAmountCheck = computed([$sellAmount, $sellTerms, $sellAvailable, $sellCoin, $sellCurrency], (amount, terms, available, coin, currency): AmountCheck => {
    const decimals = coin?.decimals ?? (currency ? decimalsOf(currency) : undefined);
    // No known currency, no amount to check: its decimals are never guessed.
    return decimals === undefined ? { fiatAmount: '0', canContinue: false } : checkSellAmount(amount, terms, available, decimals);
  });

  /** /sell/pay: picks the crypto to sell; one the account lacks is added first. */
  async function chooseSellAsset(currency: string): Promise<void> {
    if ($sellChoosing.get()) return;
    $sellChoosing.set(currency);
    try {
      await addCurrencies([currency]);
      if ($sellCurrency.get() !== currency) resetFlow();
      $sellCurrency.set(currency);
      openPage($router, 'sellOrder');
    } catch {
      showToast($t.get()('sell_unavailable'), 'error');
    } finally {
      $sellChoosing.set(null);
    }
  }

  /** Limits, a fixed rate and the saved cards for the order screen. */
  async function loadSellTerms(): Promise<void> {
    const account = $accountId.get();
    const currency = $sellCurrency.get();
    if (!account || !currency) return;
    $sellTerms.set({ ...$sellTerms.get(), loading: true, failed: false });
    try {
      const [limits, rate, cards] = await Promise.all([getSellLimits(account, SELL_FIAT), getSellRate(account, SELL_FIAT, currency), getSavedCards(account, SELL_FIAT)]);
      $sellTerms.set({ loading: false, failed: false, limits, rate, cards, rateDeadline: platform().now() + rate.expiresInSeconds * 1000 });
      rateCountdown.restart();
    } catch {
      $sellTerms.set({ loading: false, failed: true, cards: [] });
    }
  }

  // The order screen loads its terms when shown (and again once the account is known).
  // (Also when the crypto is chosen while the flow is open: the card step's guard keeps the check mounted.)
  onMount($sellAmountCheck, () =>
    computed([$accountId, $sellCurrency], (account, currency) => (account && currency ? `${account}:${currency}` : null)).subscribe((key) => {
      if (key) void loadSellTerms();
    }),
  );

  /** SPEC §5 amounts: digits, optional decimals, comma as the point, 8 and 8. */
  function setSellAmount(text: string): void {
    const value = acceptTypedAmount(text);
    if (value !== undefined) $sellAmount.set(value);
  }

  /** The rate's countdown (issue 19 item 17): shown on the amount and the review; at 0 the rate is updated by the user. */
  const rateCountdown = createCountdown(computed($sellTerms, (terms) => terms.rateDeadline ?? null), () => platform().now());
  const $sellSecondsLeft = rateCountdown.$secondsLeft;
  const $sellRateExpired = computed([$sellTerms, $sellSecondsLeft], (terms, left) => terms.rateDeadline !== undefined && left <= 0);

  return { $sellCurrency, $sellAmount, $sellTerms, $sellChoosing, $sellCoin, $sellAvailable, $sellAmountCheck, $sellSecondsLeft, $sellRateExpired, chooseSellAsset, loadSellTerms, setSellAmount };
}

export type SellAmountStep = ReturnType<typeof createSellAmount>;
