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

declare const built: unique symbol;

/**
 * One ledger entry's key, kind and reference, made only by the builders below (the brand keeps a hand-spelled key
 * out of orders/entries.ts): every write of the ledger goes through one of them.
 */
export type EntryRef = { readonly key: string; readonly kind: string; readonly reference: string; readonly [built]: true };

const entryRef = (key: string, kind: string, reference: string) => ({ key, kind, reference }) as EntryRef;

/** An order step's entry (orderEntryKey, orderEntryKind, orderReference); `round` as in orderEntryKey. */
export function orderEntry<F extends OrderFlow>(flow: F, id: string, step: OrderStep<F>, round = 0): EntryRef {
  return entryRef(orderEntryKey(flow, id, step, round), orderEntryKind(flow, step), orderReference(flow, id));
}

/** A chain deposit as its entries know it: the row and the output it credits. */
export type DepositOutput = { id: string; network: string; txHash: string; outputIndex: number };

/**
 * A deposit's entries, all referring to `deposit:<id>`: its credit (world → user) and reversal (user → world) of the
 * n-th revival, the n-th hold of a credit whose transaction lost its confirmations and its release, and the fee the
 * custodian paid to receive it (an account-based network's activation).
 */
export function depositEntry(step: 'credit' | 'reversal' | 'hold' | 'release' | 'receiveFee', d: DepositOutput, n = 0): EntryRef {
  const reference = `deposit:${d.id}`;
  switch (step) {
    case 'credit':
      return entryRef(depositEntryKey(d.network, d.txHash, d.outputIndex, n), 'DEPOSIT', reference);
    case 'reversal':
      return entryRef(depositReversalKey(d.network, d.txHash, d.outputIndex, n), 'DEPOSIT_REVERSAL', reference);
    case 'hold':
      return entryRef(depositHoldKey(d.network, d.txHash, d.outputIndex, n), 'DEPOSIT_HOLD', reference);
    case 'release':
      return entryRef(depositReleaseKey(d.network, d.txHash, d.outputIndex, n), 'DEPOSIT_RELEASE', reference);
    case 'receiveFee':
      return entryRef(`deposit-receive-fee:${d.id}`, 'DEPOSIT_RECEIVE_FEE', reference);
  }
}

/**
 * A sweep's network fees (domain/sweeps.ts), all referring to `sweep:<id>`: the sweep's own fee of round n (after
 * its n-th reopening), the fee of its n-th gas top-up, and the entries that take either back when a reorganisation
 * took the transaction (a top-up's is keyed under the top-ups' prefix, so the audit's sum of top-up fees nets it out).
 */
export function sweepEntry(step: 'fee' | 'topUpFee' | 'feeReopen' | 'topUpFeeReopen', sweepId: string, n = 0): EntryRef {
  const reference = `sweep:${sweepId}`;
  switch (step) {
    case 'fee':
      return entryRef(`sweep:fee:${sweepId}${revivalSuffix(n)}`, 'SWEEP_FEE', reference);
    case 'topUpFee':
      return entryRef(`sweep:top-up-fee:${sweepId}:${n}`, 'SWEEP_FEE', reference);
    case 'feeReopen':
      return entryRef(`sweep:fee-reopen:${sweepId}#${n}`, 'SWEEP_FEE_REOPEN', reference);
    case 'topUpFeeReopen':
      return entryRef(`sweep:top-up-fee:${sweepId}:${n}:reopen`, 'SWEEP_FEE_REOPEN', reference);
  }
}

/**
 * A custody movement's entries (domain/custody-movements.ts; the audit in custody-audit.ts spells the same keys), all
 * referring to `custody-movement:<id>`: a cold sweep's amount (cold storage → world) and the network fee of round n
 * (after its n-th reopening; the first round's keys have no suffix), and the entry of the n-th reopening that takes
 * the previous round's booking back.
 */
export function coldSweepEntry(step: 'sweep' | 'networkFee' | 'reopen', movementId: string, round = 0): EntryRef {
  const reference = `custody-movement:${movementId}`;
  switch (step) {
    case 'sweep':
      return entryRef(`cold-sweep:${movementId}${revivalSuffix(round)}`, 'COLD_SWEEP', reference);
    case 'networkFee':
      return entryRef(`cold-sweep:network-fee:${movementId}${revivalSuffix(round)}`, 'NETWORK_FEE', reference);
    case 'reopen':
      return entryRef(`cold-sweep:reopen:${movementId}${revivalSuffix(round)}`, 'COLD_SWEEP_REOPEN', reference);
  }
}

/** The entry kinds of the custodian's fundings from outside, which the exposure report (market/exposure.ts) reads. */
export const GAS_FUNDING_KIND = 'GAS_FUNDING';
export const DESK_FUNDING_KIND = 'DESK_FUNDING';

/** The network's coin from outside becoming its gas float (gas-float.ts), once per operator's key. */
export function gasFundingEntry(network: string, key: string): EntryRef {
  return entryRef(`gas-funding:${network}:${key}`, GAS_FUNDING_KIND, `gas-float:${network}`);
}

/** Coins from outside becoming the swap desk's inventory (market/desk.ts), once per operator's key. */
export function deskFundingEntry(currency: string, key: string): EntryRef {
  return entryRef(`desk-funding:${key}`, DESK_FUNDING_KIND, `desk:${currency}`);
}

/**
 * sweepEntry's keys as SQL over a sweeps id column, for the audit (sweep-audit.ts): the fee of round `n` or the
 * reopening `n` (SQL expressions); `topUpFees` the keys of every sweep's top-up fees (a condition over a ledger_entries
 * key column), `topUpFeeSweep` the sweep id (as text) such a key belongs to.
 */
export const sweepEntryKeySql = {
  fee: (idColumn: string, round: string) => `'sweep:fee:' || ${idColumn} || ${revivalSuffixSql(round)}`,
  feeReopen: (idColumn: string, round: string) => `'sweep:fee-reopen:' || ${idColumn} || '#' || ${round}`,
  topUpFees: (keyColumn: string) => `${keyColumn} LIKE 'sweep:top-up-fee:%'`,
  topUpFeeSweep: (keyColumn: string) => `split_part(${keyColumn}, ':', 3)`,
};

/** coldSweepEntry's key as SQL over a custody_movements id column and a round (an SQL expression), for custody-audit.ts. */
export function coldSweepEntryKeySql(step: 'sweep' | 'networkFee' | 'reopen', idColumn: string, round: string): string {
  const prefix = { sweep: 'cold-sweep:', networkFee: 'cold-sweep:network-fee:', reopen: 'cold-sweep:reopen:' }[step];
  return `'${prefix}' || ${idColumn} || ${revivalSuffixSql(round)}`;
}
