/**
 * Selling crypto to a bank card in RUB (SPEC §2 Sell, §3, §5, §7): cards (cards.ts), limits and rates (quotes.ts),
 * orders that hold the crypto (requests.ts), handing them to the payout provider (submission.ts) and its reports
 * (payouts.ts), over one set of dependencies. The desk's method names and inputs are what http/sell.ts and the
 * worker call.
 */
import type { PayoutReport } from '../../adapters/payout/port.ts';
import { lookupBin, savedCards } from './cards.ts';
import type { SellDeps } from './context.ts';
import { applyPayoutReport } from './payouts.ts';
import { limits, quote } from './quotes.ts';
import { findOrder, orderByCard, orderBySavedCard, type ByCardInput, type BySavedCardInput } from './requests.ts';
import { limitsOf } from './rules.ts';
import { submitPending } from './submission.ts';

export type SellDesk = ReturnType<typeof createSellDesk>;

export function createSellDesk(deps: SellDeps) {
  // A limit that is no amount is refused when the desk is made, not at the first order.
  limitsOf(deps.settings);
  return {
    lookupBin: (bin: string) => lookupBin(deps, bin),
    limits: (fiat: string) => limits(deps, fiat),
    quote: (account: string, fiat: string, currency: string) => quote(deps, account, fiat, currency),
    savedCards: (account: string, fiat: string) => savedCards(deps, account, fiat),
    orderByCard: (account: string, input: ByCardInput) => orderByCard(deps, account, input),
    orderBySavedCard: (account: string, input: BySavedCardInput) => orderBySavedCard(deps, account, input),
    findOrder: (account: string, id: string) => findOrder(deps, account, id),
    applyPayoutReport: (report: PayoutReport) => applyPayoutReport(deps, report),
    submitPending: () => submitPending(deps),
  };
}
