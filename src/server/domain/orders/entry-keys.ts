/**
 * The one place where the ledger keys, kinds and references of orders are spelled. Existing databases hold these
 * exact strings (`withdrawal:hold:<id>`...), so they never change; the audit builds its SQL from here as well.
 */

/** Each order flow's ledger steps and the entry kind each step posts. */
export const ORDER_FLOWS = {
  withdrawal: { hold: 'WITHDRAWAL_HOLD', settle: 'WITHDRAWAL', release: 'WITHDRAWAL_RELEASE', internal: 'INTERNAL_TRANSFER', networkFee: 'NETWORK_FEE', reopen: 'WITHDRAWAL_REOPEN' },
  swap: { hold: 'SWAP_HOLD', confirm: 'SWAP', release: 'SWAP_RELEASE' },
  sell: { hold: 'SELL_HOLD', settle: 'SELL_PAYOUT', release: 'SELL_RETURN' },
  buy: { credit: 'BUY_CREDIT' },
  /** An operator's credit or debit, applied once a second operator approves it (operator/adjustments.ts). */
  adjustment: { credit: 'OPERATOR_CREDIT', debit: 'OPERATOR_DEBIT' },
} as const;

export type OrderFlow = keyof typeof ORDER_FLOWS;
export type OrderStep<F extends OrderFlow> = keyof (typeof ORDER_FLOWS)[F] & string;

/** An order as the ledger knows it: its flow and its id. */
export type OrderRef<F extends OrderFlow = OrderFlow> = { flow: F; id: string };

/**
 * The idempotency key of one step's entry: `<flow>:<step>:<id>`, applied once whatever retries. `round`: a step an
 * order takes again (a completed withdrawal reopened after a reorganisation settles again, `…#<round>`); the first
 * round's keys have no suffix.
 */
export function orderEntryKey<F extends OrderFlow>(flow: F, id: string, step: OrderStep<F>, round = 0): string {
  return `${flow}:${step}:${id}${revivalSuffix(round)}`;
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

/** The same key as SQL over an id column, for the audit's joins: `'withdrawal:hold:' || w.id`; `round` an SQL expression. */
export function orderEntryKeySql<F extends OrderFlow>(flow: F, step: OrderStep<F>, idColumn: string, round?: string): string {
  return `'${flow}:${step}:' || ${idColumn}${round === undefined ? '' : ` || ${revivalSuffixSql(round)}`}`;
}

/**
 * A deposit's entry is keyed by the chain output, whichever worker or scan credits it; a credit after the n-th
 * revival (mined again after its credit was reversed: chain_deposits.revivals) is an entry of its own, `...#n`.
 */
export function depositEntryKey(network: string, txHash: string, outputIndex: number, revival = 0): string {
  return `deposit:${network}:${txHash}:${outputIndex}${revivalSuffix(revival)}`;
}

/** depositEntryKey as SQL over a chain_deposits alias, of its current revival or of `revival` (an SQL expression). */
export function depositEntryKeySql(alias: string, revival = `${alias}.revivals`): string {
  return `'deposit:' || ${alias}.network || ':' || ${alias}.tx_hash || ':' || ${alias}.output_index || ${revivalSuffixSql(revival)}`;
}

/** The entry that takes back a credited deposit whose transaction left the chain (user → world), once per credit. */
export function depositReversalKey(network: string, txHash: string, outputIndex: number, revival = 0): string {
  return `deposit-reversal:${network}:${txHash}:${outputIndex}${revivalSuffix(revival)}`;
}

/** The first credit's keys have no suffix: the keys existing databases hold stay as they are. */
function revivalSuffix(revival: number): string {
  return revival === 0 ? '' : `#${revival}`;
}

function revivalSuffixSql(revival: string): string {
  return `CASE WHEN ${revival} = 0 THEN '' ELSE '#' || ${revival} END`;
}

/** depositReversalKey as SQL over a chain_deposits alias, of its current revival or of `revival` (an SQL expression). */
export function depositReversalKeySql(alias: string, revival = `${alias}.revivals`): string {
  return `'deposit-reversal:' || ${alias}.network || ':' || ${alias}.tx_hash || ':' || ${alias}.output_index || ${revivalSuffixSql(revival)}`;
}

/**
 * A credited deposit whose transaction lost its confirmations is put on hold (available → on hold) and released
 * when it has them again: the n-th hold (chain_deposits.holds) and its release, once each.
 */
export function depositHoldKey(network: string, txHash: string, outputIndex: number, hold: number): string {
  return `deposit-hold:${network}:${txHash}:${outputIndex}:${hold}`;
}

export function depositReleaseKey(network: string, txHash: string, outputIndex: number, hold: number): string {
  return `deposit-release:${network}:${txHash}:${outputIndex}:${hold}`;
}

/** depositHoldKey or depositReleaseKey as SQL over a chain_deposits alias and a hold number (an SQL expression). */
export function depositHoldKeySql(step: 'hold' | 'release', alias: string, hold: string): string {
  return `'deposit-${step}:' || ${alias}.network || ':' || ${alias}.tx_hash || ':' || ${alias}.output_index || ':' || ${hold}`;
}
