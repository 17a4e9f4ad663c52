/** A buy order as the gateway shows it (SPEC §3 buy order), and how it is read from its row. */
import { formatUnits } from '../../../lib/amount.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { formatMoney, money } from '../../../lib/money.ts';
import type { BuyOrderRow } from './store.ts';
import { FIAT_DECIMALS } from './rules.ts';
import type { BuyOrderState, BuyOrderView } from '../../../lib/wire/buy.ts';
export type { BuyOrderState, BuyOrderView };


export function buyOrderView(row: BuyOrderRow): BuyOrderView {
  const crypto = money(row.currency, unitsFromRow(row.amount, 'amount'));
  return {
    id: row.id,
    state: row.state,
    delivery: row.delivery,
    currency: row.currency,
    cryptoAmount: formatMoney(crypto),
    fiatCurrency: row.fiatCurrency,
    fiatAmount: formatUnits(unitsFromRow(row.fiatAmount, 'fiatAmount'), FIAT_DECIMALS),
    rate: row.rate,
    paymentMethodCode: row.methodCode,
    // The provider's page exists only once the order is confirmed.
    redirectUrl: row.state === 'NEW' ? null : row.redirectUrl,
    transactionId: row.walletTransactionId,
    failureReason: row.failureReason,
    createdDate: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    completedDate: row.completedAt?.toISOString() ?? null,
  };
}
