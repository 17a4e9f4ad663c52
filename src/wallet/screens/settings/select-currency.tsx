import { useStore } from '@nanostores/react';
import { $t } from '../../../stores/i18n.ts';
import { $selectedCurrency } from '../../../stores/settings.ts';
import { chooseCurrency, FIAT_CURRENCIES, FIAT_SYMBOLS, type FiatCurrency } from '../../../stores/user.ts';
import { OptionList } from '../../ui/option-list.tsx';
import { ScreenHeader } from '../../ui/screen-header.tsx';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../../stores/router.ts';

export function SelectCurrencyScreen() {
  const t = useStore($t);
  const selected = useStore($selectedCurrency) as FiatCurrency;
  const options = FIAT_CURRENCIES.map((currency) => ({ value: currency, title: `${currency} ${FIAT_SYMBOLS[currency] ?? ''}`.trim(), detail: t(`currency_${currency}`) }));
  return (
    <div className="screen">
      <ScreenHeader title={t('settings_select_currency_title')} back={getPagePath($router, 'settings')} backLabel={t('common_back')} />
      <OptionList label={t('settings_select_currency_title')} options={options} selected={selected} onSelect={(currency) => void chooseCurrency(currency)} />
    </div>
  );
}
