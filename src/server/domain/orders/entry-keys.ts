/**
 * The one place where the ledger keys, kinds and references of orders are spelled. Existing databases hold these
 * exact strings (`withdrawal:hold:<id>`...), so they never change; the audit builds its SQL from here as well.
 */

/** Each order flow's ledger steps and the entry kind each step posts. */
export const ORDER_FLOWS = {
  withdrawal: { hold: 'WITHDRAWAL_HOLD', settle: 'WITHDRAWAL', release: 'WITHDRAWAL_RELEASE', internal: 'INTERNAL_TRANSFER', networkFee: 'NETWORK_FEE' },
  swap: { hold: 'SWAP_HOLD', confirm: 'SWAP', release: 'SWAP_RELEASE' },
  sell: { hold: 'SELL_HOLD', settle: 'SELL_PAYOUT', release: 'SELL_RETURN' },
  buy: { credit: 'BUY_CREDIT' },
} as const;

export type OrderFlow = keyof typeof ORDER_FLOWS;
export type OrderStep<F extends OrderFlow> = keyof (typeof ORDER_FLOWS)[F] & string;

/** An order as the ledger knows it: its flow and its id. */
export type OrderRef<F extends OrderFlow = OrderFlow> = { flow: F; id: string };

/** The idempotency key of one step's entry: `<flow>:<step>:<id>`, applied once whatever retries. */
export function orderEntryKey<F extends OrderFlow>(flow: F, id: string, step: OrderStep<F>): string {
  return `${flow}:${step}:${id}`;
}

/** The entry kind a step posts (WITHDRAWAL_HOLD, SWAP...). */
export function orderEntryKind<F extends OrderFlow>(flow: F, step: OrderStep<F>): string {
  return (ORDER_FLOWS[flow] as Record<string, string>)[step] as string;
}

/** What an order's entries and history items point back to: `<flow>:<id>`. */
export function orderReference(flow: OrderFlow, id: string): string {
  return `${flow}:${id}`;
}

/** The order id in a reference of the flow (`sell:<uuid>` → the uuid), as a provider hands it back; else undefined. */
export function orderIdOfReference(flow: OrderFlow, reference: string): string | undefined {
  const prefix = `${flow}:`;
  const id = reference.startsWith(prefix) ? reference.slice(prefix.length) : '';
  return /^[0-9a-f-]{36}$/i.test(id) ? id : undefined;
}

/** The same key as SQL over an id column, for the audit's joins: `'withdrawal:hold:' || w.id`. */
export function orderEntryKeySql<F extends OrderFlow>(flow: F, step: OrderStep<F>, idColumn: string): string {
  return `'${flow}:${step}:' || ${idColumn}`;
}

/** A deposit's entry is keyed by the chain output, whichever worker or scan credits it. */
export function depositEntryKey(network: string, txHash: string, outputIndex: number): string {
  return `deposit:${network}:${txHash}:${outputIndex}`;
}

/** depositEntryKey as SQL over a chain_deposits alias. */
export function depositEntryKeySql(alias: string): string {
  return `'deposit:' || ${alias}.network || ':' || ${alias}.tx_hash || ':' || ${alias}.output_index`;
}

/** The entry that takes back a credited deposit whose transaction left the chain (user → world), once per output. */
export function depositReversalKey(network: string, txHash: string, outputIndex: number): string {
  return `deposit-reversal:${network}:${txHash}:${outputIndex}`;
}

/** depositReversalKey as SQL over a chain_deposits alias. */
export function depositReversalKeySql(alias: string): string {
  return `'deposit-reversal:' || ${alias}.network || ':' || ${alias}.tx_hash || ':' || ${alias}.output_index`;
}
