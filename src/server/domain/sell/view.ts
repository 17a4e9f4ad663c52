/** A sell order as the gateway shows it (SPEC §3 sell order), and how it is read from its row. */
import { formatUnits } from '../../../lib/amount.ts';
import { unitsFromRow } from '../../db/amounts.ts';
import { formatMoney, money } from '../../../lib/money.ts';
import type { SellOrderRow } from './store.ts';
import { FIAT_DECIMALS } from './rules.ts';
import type { SellOrderView } from '../../../lib/wire/sell.ts';
export type { SellOrderView };


export function sellOrderView(row: SellOrderRow): SellOrderView {
  const sold = money(row.currency, unitsFromRow(row.amount, 'amount'));
  return {
    id: row.id,
    state: row.state,
    currency: row.currency,
    amount: formatMoney(sold),
    fiatCurrency: row.fiatCurrency,
    fiatAmount: formatUnits(unitsFromRow(row.fiatAmount, 'fiatAmount'), FIAT_DECIMALS),
    rate: row.rate,
    mascCard: row.maskedCard,
    bankCode: row.bankCode,
    cardId: row.savedCardId,
    transactionId: row.walletTransactionId,
    failureReason: row.failureReason,
    createdDate: row.createdAt.toISOString(),
    completedDate: row.completedAt?.toISOString() ?? null,
  };
}
