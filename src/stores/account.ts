import { computed } from 'nanostores';
import { $account, FIAT_SYMBOLS } from './user.ts';
import { $selectedCurrency } from './settings.ts';

/** The wallet account the gateway paths name ({account}); null until the profile is known. */
export const $accountId = computed($account, (account) => account?.id ?? null);

/** SPEC §9: the chosen fiat's symbol; an unknown one is shown by its code. */
export const $fiatSymbol = computed($selectedCurrency, (fiat) => FIAT_SYMBOLS[fiat] ?? fiat);
