// What the buy pays with and gets (SPEC §2 /buy/get, /buy/pay, /buy/method): the crypto (added to the account first
// when it lacks it), the fiat (skipped when there is one option), the payment method among those quoted.
import { computed } from 'nanostores';
import { openPage, redirectPage } from '@nanostores/router';
import { getFiatAvailability, type FiatAvailability } from '../../api/buy.ts';
import { $balances, addCurrencies } from '../balances.ts';
import { showErrorToast } from '../errors.ts';
import { createQuery } from '../query.ts';
import { $router } from '../router.ts';
import type { BuyAmountStep } from './amount.ts';
import { shouldSkipFiatChooser } from './rules.ts';

const availabilityQuery = createQuery<string, FiatAvailability[]>({ key: (address) => address || '-', load: (address) => getFiatAvailability(address || undefined) });

export function createBuyChoices({ $buy, resetAmounts }: Pick<BuyAmountStep, '$buy' | 'resetAmounts'>) {
  const $availabilityArgs = computed([$buy, $balances], (buy, balances) => {
    if (!buy.to) return null;
    return balances.data?.find((item) => item.currency === buy.to)?.depositAddress ?? '';
  });
  /** /buy/pay: the fiat currencies a purchase of the chosen crypto can be paid in. */
  const $fiatOptions = availabilityQuery.watch($availabilityArgs);

  /** /buy/get: picking a crypto the account lacks adds it first (SPEC §2), then on to the fiat. */
  async function chooseBuyCrypto(currency: string): Promise<void> {
    if ($buy.get().choosing) return;
    $buy.setKey('choosing', currency);
    try {
      await addCurrencies([currency]);
      const state = $buy.get();
      if (state.to !== currency) resetAmounts({ to: currency });
      $buy.setKey('backFromOrder', false);
      openPage($router, 'buyPay');
    } catch (error) {
      showErrorToast(error, { fallback: 'common_something_went_wrong' });
    } finally {
      $buy.setKey('choosing', null);
    }
  }

  /** /buy/pay: the fiat chosen; amounts in another currency start again. */
  function chooseBuyFiat(option: FiatAvailability, replace = false): void {
    const state = $buy.get();
    if (state.from !== option.fiatCurrency) resetAmounts({ from: option.fiatCurrency, geoId: option.geoId });
    $buy.setKey('backFromOrder', false);
    if (replace) redirectPage($router, 'buyOrder');
    else openPage($router, 'buyOrder');
  }

  /** /buy/pay with one fiat option: it is picked and the chooser skipped (replaced in history). */
  const $onlyFiat = computed([$router, $buy, $fiatOptions], (page, buy, options) => (page?.route === 'buyPay' && buy.to ? shouldSkipFiatChooser(options.data, buy.backFromOrder) : undefined));

  /** The order screen's currency chip: back to the fiat chooser, which then never skips itself. */
  function changeBuyFiat(): void {
    $buy.setKey('backFromOrder', true);
    openPage($router, 'buyPay');
  }

  /** /buy/method: the method chosen; the side not typed follows its amounts. */
  function chooseBuyMethod(code: string): void {
    const state = $buy.get();
    const method = state.methods.find((m) => m.paymentMethodCode === code);
    if (!method) return;
    const other = state.typed === 'to' ? { fromAmount: method.fiatAmount } : { toAmount: method.cryptoAmount };
    $buy.set({ ...state, ...other, method: code });
    openPage($router, 'buyOrder');
  }

  return { $fiatOptions, $onlyFiat, chooseBuyCrypto, chooseBuyFiat, changeBuyFiat, chooseBuyMethod };
}
