import type { RouteName } from '../../../stores/router.ts';
import { SelectCurrencyScreen } from './select-currency.tsx';
import { SelectLanguageScreen } from './select-language.tsx';
import { SettingsScreen } from './settings.tsx';
import { FeedbackScreen } from './feedback.tsx';
import { ReservesScreen } from './reserves.tsx';

/** The settings area, loaded as one lazy chunk: it picks its screen by route. */
export function SettingsArea({ route }: { route: RouteName }) {
  switch (route) {
    case 'selectCurrency':
      return <SelectCurrencyScreen />;
    case 'selectLanguage':
      return <SelectLanguageScreen />;
    case 'feedback':
      return <FeedbackScreen />;
    case 'reserves':
      return <ReservesScreen />;
    default:
      return <SettingsScreen />;
  }
}
