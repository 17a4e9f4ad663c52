/**
 * Withdrawals (SPEC §3 transaction, §5 send rules, §7 withdrawal, check-address, preliminary fee).
 *
 * The amount entered is debited; the recipient receives it less the fee. An address that is another user's deposit
 * address is an INTERNAL transfer: one ledger entry from the sender to the recipient in the request's transaction,
 * no fee, a history item on both sides. Any other address is EXTERNAL: the request holds the amount and records the
 * withdrawal in one transaction; the worker then signs it (the signed transaction and its hash are recorded before
 * anything is sent), broadcasts it, and once the chain confirms it settles the hold (amount less fee to the
 * network's world account, the fee to fee income): COMPLETED. A refused or dropped transaction releases the hold:
 * FAILED. Every step claims its row with FOR UPDATE SKIP LOCKED, and a withdrawal found SIGNED after a crash is
 * first looked up on the chain by its hash: if the chain has it, it is only marked broadcast, never sent again.
 */
import type pg from 'pg';
import { Address as TonAddress } from '@ton/core';
import { AmountError, formatUnits, parseDecimal } from '../../lib/amount.ts';
import { explorerLink, type CoinMeta, type Network } from '../../lib/currencies.ts';
import { BroadcastRejectedError, transferKey, type WithdrawalChainPort } from '../adapters/chains/port.ts';
import type { WithdrawalConfig } from '../config-withdrawals.ts';
import { ALERT_AFTER_ATTEMPTS, type Logger } from '../log.ts';
import type { Catalogue } from './catalogue.ts';
import { isValidAddress, toChecksumAddress } from './addresses.ts';
import { notifyAccountChanged } from './account-changes.ts';
import { ensureUserLedgerAccount, hold, LedgerError, release, settle, SYSTEM_ACCOUNTS, systemAccountId, transfer, type Queryable } from './ledger.ts';

/** SPEC §5: at most 8 digits after the point in any amount a user types. */
const SHOWN_DECIMALS = 8;
const SIGN_BATCH = 20;
const BROADCAST_BATCH = 20;
const CONFIRM_BATCH = 200;

export type WithdrawalProblem =
  | 'UNKNOWN_CURRENCY'
  | 'WRONG_ADDRESS'
  | 'ADDRESS_NOT_USED'
  | 'SAME_USER'
  | 'NOT_ENOUGH_FUNDS'
  | 'AMOUNT_PRECISION'
  | 'AMOUNT_TOO_SMALL'
  | 'KEY_REUSED'
  | 'NOT_FOUND';

export class WithdrawalError extends Error {
  readonly problem: WithdrawalProblem;
  constructor(problem: WithdrawalProblem, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.problem = problem;
  }
}

/** SPEC §3 address check result: BLOCKED and NOT_USED both refuse the address ('send_error_address_not_used'). */
export type CheckResult = 'VALID' | 'INVALID' | 'BLOCKED' | 'NOT_USED';
export type AccountType = 'B2C' | 'B2B';

export type AddressCheck = {
  checkResult: CheckResult;
  belongsToSameUser: boolean;
  accountType: AccountType;
  /** Another user of this wallet: the transfer settles at once, without a fee. */
  internal: boolean;
  /** The address as it will be used (trimmed; the network's canonical spelling for a wallet user's address). */
  address: string;
  network: Network;
  /** The sender's own name for the address in their address book, or a business recipient's name. */
  recipientName: string | null;
  /** Whether the sender's address book already holds the address on this network. */
  saved: boolean;
};

export type FeeView = { currency: string; feeCurrency: string; fee: string; amount: string; receiveAmount: string; internal: boolean };

export type WithdrawalState = 'PENDING' | 'SIGNED' | 'BROADCAST' | 'COMPLETED' | 'FAILED';

export type WithdrawalView = {
  id: string;
  account: string;
  currency: string;
  network: string;
  amount: string;
  fee: string;
  feeCurrency: string;
  receiveAmount: string;
  depositAddress: string;
  internal: boolean;
  /** As the history shows it: IN_PROGRESS until the chain confirms it. */
  state: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  hash: string | null;
  explorerUrl: string | null;
  transactionId: string | null;
  accountToType: AccountType | null;
  confirmations: number;
  confirmationsRequired: number | null;
  failureReason: string | null;
  createdDate: string;
  completedDate: string | null;
};

type Row = {
  id: string;
  wallet_account_id: string;
  idempotency_key: string;
  kind: 'INTERNAL' | 'EXTERNAL';
  state: WithdrawalState;
  currency: string;
  network: Network;
  amount: string;
  fee: string;
  to_address: string;
  from_address: string | null;
  recipient_account_id: string | null;
  wallet_transaction_id: string | null;
  raw_tx: string | null;
  tx_hash: string | null;
  confirmations: number;
  confirmations_required: number | null;
  failure_reason: string | null;
  account_to_type: AccountType | null;
  created_at: Date;
  closed_at: Date | null;
};

const COLUMNS = `w.id, w.wallet_account_id, w.idempotency_key, w.kind, w.state, w.currency, w.network, w.amount, w.fee, w.to_address,
  w.from_address, w.recipient_account_id, w.wallet_transaction_id, w.raw_tx, w.tx_hash, w.confirmations, w.confirmations_required,
  w.failure_reason, t.account_to_type, w.created_at, w.closed_at`;
const FROM = 'withdrawals w LEFT JOIN wallet_transactions t ON t.id = w.wallet_transaction_id';

/**
 * The form in which deposit addresses are stored, so a user's address typed in another valid spelling is still
 * recognised: EIP-55 for Ethereum, lower case for bech32, TON's non-bounceable url-safe form.
 */
export function canonicalAddress(network: Network, address: string): string {
  try {
    if (network === 'ETHEREUM') return toChecksumAddress(address.slice(2).toLowerCase());
    if ((network === 'BITCOIN' || network === 'LITECOIN') && /^(bc1|ltc1|tb1|bcrt1)/i.test(address)) return address.toLowerCase();
    if (network === 'TON') return TonAddress.parse(address).toString({ bounceable: false, urlSafe: true });
  } catch {
    return address;
  }
  return address;
}

/** An amount from the wire to units of the coin: at most 8 decimals and no more than the coin has, above zero. */
export function withdrawalUnits(text: string, coin: CoinMeta): bigint {
  const places = Math.min(coin.decimals, SHOWN_DECIMALS);
  let units: bigint;
  try {
    units = parseDecimal(text, places);
  } catch (error) {
    if (error instanceof AmountError) throw new WithdrawalError('AMOUNT_PRECISION', `${coin.currency} amounts have at most ${places} decimals`, { cause: error });
    throw error;
  }
  if (units <= 0n) throw new WithdrawalError('AMOUNT_TOO_SMALL', 'The amount must be above 0');
  return units * 10n ** BigInt(coin.decimals - places);
}

export type WithdrawalService = ReturnType<typeof createWithdrawalService>;

/** `changed` hears of each account whose balances a request changed, once committed (this process's caches). */
export function createWithdrawalService(deps: { pool: pg.Pool; chain: WithdrawalChainPort; catalogue: Catalogue; settings: WithdrawalConfig; changed?: (walletAccountId: string) => void }) {
  const { pool, chain, catalogue, settings } = deps;
  const coins = new Map(catalogue.coins.map((coin) => [coin.currency, coin]));
  // Fees are read once; one finer than its currency allows is a configuration mistake, refused at start.
  const fees = new Map<string, bigint>();
  for (const coin of catalogue.coins) {
    const fee = settings.fees[coin.currency] ?? '0';
    try {
      fees.set(coin.currency, parseDecimal(fee, coin.decimals));
    } catch {
      throw new Error(`WITHDRAWAL_FEES: the ${coin.currency} fee ${fee} has more decimals than ${coin.currency} (${coin.decimals})`);
    }
  }

  const coinOf = (currency: string): CoinMeta => {
    const coin = coins.get(currency);
    if (!coin || !coin.active) throw new WithdrawalError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet sends`);
    return coin;
  };
  const feeOf = (coin: CoinMeta) => fees.get(coin.currency) ?? 0n;

  /** SPEC §5 address rules, on the server: the network's format with its checksum, the block list, and who owns it. */
  async function checkAddress(account: string, currency: string, rawAddress: string): Promise<AddressCheck & { recipientAccountId: string | null; senderType: AccountType; senderName: string | null }> {
    const coin = coinOf(currency);
    const network = coin.network;
    const typed = rawAddress.trim();
    const base = { belongsToSameUser: false, accountType: 'B2C' as AccountType, internal: false, network, recipientName: null, saved: false, recipientAccountId: null, senderType: 'B2C' as AccountType, senderName: null };
    if (!isValidAddress(network, typed)) return { ...base, checkResult: 'INVALID', address: typed };
    const address = canonicalAddress(network, typed);
    const blocked = settings.blockedAddresses.some((b) => isValidAddress(network, b) && canonicalAddress(network, b) === address);
    if (blocked) return { ...base, checkResult: 'BLOCKED', address: typed };
    if (address === (await chain.hotWalletAddress(network))) return { ...base, checkResult: 'NOT_USED', address: typed };
    const found = await pool.query<{ owner: string | null; owner_user: string | null; sender_user: string | null; owner_business: string | null; sender_business: string | null; saved_name: string | null }>(
      `SELECT d.wallet_account_id AS owner, a.user_id AS owner_user, s.user_id AS sender_user, ob.name AS owner_business, sb.name AS sender_business,
              (SELECT e.name FROM address_book_entries e WHERE e.wallet_account_id = $3 AND e.blockchain = $1 AND (e.address = $2 OR e.address = $4) LIMIT 1) AS saved_name
         FROM wallet_accounts s
         LEFT JOIN deposit_addresses d ON d.network = $1 AND d.address = $2
         LEFT JOIN wallet_accounts a ON a.id = d.wallet_account_id
         LEFT JOIN business_accounts ob ON ob.wallet_account_id = d.wallet_account_id
         LEFT JOIN business_accounts sb ON sb.wallet_account_id = s.id
        WHERE s.id = $3`,
      [network, address, account, typed],
    );
    const row = found.rows[0];
    const senderType: AccountType = row?.sender_business ? 'B2B' : 'B2C';
    const common = { ...base, checkResult: 'VALID' as const, saved: row?.saved_name != null, senderType, senderName: row?.sender_business ?? null };
    if (!row?.owner) return { ...common, address: typed, recipientName: row?.saved_name ?? null };
    return {
      ...common,
      address,
      internal: true,
      belongsToSameUser: row.owner_user === row.sender_user,
      accountType: row.owner_business ? 'B2B' : 'B2C',
      recipientName: row.saved_name ?? row.owner_business,
      recipientAccountId: row.owner,
    };
  }

  /** SPEC §7 preliminary fee: the fee for this currency and address (none to another user of this wallet). */
  async function preliminaryFee(account: string, input: { currency: string; amount?: string | undefined; depositAddress?: string | undefined }): Promise<FeeView> {
    const coin = coinOf(input.currency);
    let internal = false;
    if (input.depositAddress !== undefined && input.depositAddress.trim() !== '') {
      const check = await checkAddress(account, coin.currency, input.depositAddress);
      if (check.checkResult === 'INVALID') throw new WithdrawalError('WRONG_ADDRESS', 'The withdrawal address format is wrong.');
      internal = check.internal;
    }
    const fee = internal ? 0n : feeOf(coin);
    const amount = withdrawalUnits(input.amount ?? '100', coin);
    return {
      currency: coin.currency,
      feeCurrency: coin.currency,
      fee: formatUnits(fee, coin.decimals),
      amount: formatUnits(amount, coin.decimals),
      receiveAmount: formatUnits(amount > fee ? amount - fee : 0n, coin.decimals),
      internal,
    };
  }

  /**
   * SPEC §7 POST withdrawal. Once per idempotency key: the same key and request give the same withdrawal (a second
   * request while the first runs waits for it on the key's unique index), the same key with another request is
   * KEY_REUSED. The hold (or the internal transfer) commits together with the withdrawal and its history items.
   */
  async function create(account: string, input: { currency: string; amount: string; depositAddress: string; idempotencyKey: string }): Promise<WithdrawalView> {
    const coin = coinOf(input.currency);
    const units = withdrawalUnits(input.amount, coin);
    const typed = input.depositAddress.trim();
    const earlier = await findByKey(pool, account, input.idempotencyKey);
    if (earlier) return sameRequest(earlier, coin, units, typed);

    const check = await checkAddress(account, coin.currency, typed);
    if (check.checkResult === 'INVALID') throw new WithdrawalError('WRONG_ADDRESS', 'The withdrawal address format is wrong.');
    if (check.checkResult === 'BLOCKED' || check.checkResult === 'NOT_USED') throw new WithdrawalError('ADDRESS_NOT_USED', 'Address not used');
    if (check.belongsToSameUser) throw new WithdrawalError('SAME_USER', "You can't make a transfer to yourself");
    const fee = check.internal ? 0n : feeOf(coin);
    if (units <= fee) {
      throw new WithdrawalError('AMOUNT_TOO_SMALL', `The amount must be above the fee of ${formatUnits(fee, coin.decimals)} ${coin.baseCurrency}`);
    }

    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO withdrawals (wallet_account_id, idempotency_key, kind, state, currency, network, amount, fee, to_address, recipient_account_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (wallet_account_id, idempotency_key) DO NOTHING RETURNING id`,
        [account, input.idempotencyKey, check.internal ? 'INTERNAL' : 'EXTERNAL', check.internal ? 'COMPLETED' : 'PENDING', coin.currency, coin.network, units.toString(), fee.toString(), check.address, check.recipientAccountId],
      );
      const id = inserted.rows[0]?.id;
      if (!id) {
        // Another request with this key committed while this one waited on it.
        // Read on this connection: asking the pool for another while holding one could starve it under a burst.
        await client.query('ROLLBACK');
        const raced = await findByKey(client, account, input.idempotencyKey);
        if (!raced) throw new WithdrawalError('KEY_REUSED', 'This idempotency key is in use by another request; try again');
        return sameRequest(raced, coin, units, typed);
      }
      await ensureUserLedgerAccount(client, account);
      const ownAddress = await client.query<{ address: string }>('SELECT address FROM deposit_addresses WHERE wallet_account_id = $1 AND network = $2', [account, coin.network]);
      const senderAddress = ownAddress.rows[0]?.address ?? null;
      const shown = (values: {
        owner: string;
        type: 'WITHDRAWAL' | 'DEPOSIT';
        state: 'IN_PROGRESS' | 'COMPLETED';
        reference: string;
        from: string | null;
        toType: AccountType | null;
        senderName: string | null;
        recipientName: string | null;
      }) =>
        client.query<{ id: string }>(
          `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, fee, fee_currency, network,
                                            from_address, to_address, contact, sender_name, recipient_name, account_from_type, account_to_type,
                                            reference, completed_at)
           VALUES ($1, $2, $2, $3, $4, $5, $6, $4, $7, $8, $9, $10, $11, $12, $13, $14, $15, CASE WHEN $3 = 'COMPLETED' THEN now() END) RETURNING id`,
          [
            values.owner,
            values.type,
            values.state,
            coin.currency,
            units.toString(),
            values.type === 'WITHDRAWAL' ? fee.toString() : '0',
            coin.network,
            values.from,
            check.address,
            values.type === 'WITHDRAWAL' ? check.recipientName : null,
            values.senderName,
            values.recipientName,
            check.senderType,
            values.toType,
            values.reference,
          ],
        );
      const refuse = (error: unknown): never => {
        if (error instanceof LedgerError && error.problem === 'INSUFFICIENT_FUNDS') throw new WithdrawalError('NOT_ENOUGH_FUNDS', 'Not enough funds', { cause: error });
        throw error;
      };

      if (check.internal && check.recipientAccountId) {
        const recipient = check.recipientAccountId;
        await ensureUserLedgerAccount(client, recipient);
        await transfer(client, { key: `withdrawal:internal:${id}`, kind: 'INTERNAL_TRANSFER', reference: `withdrawal:${id}`, from: account, to: recipient, currency: coin.currency, amount: units }).catch(refuse);
        const sent = await shown({ owner: account, type: 'WITHDRAWAL', state: 'COMPLETED', reference: `withdrawal:${id}`, from: senderAddress, toType: check.accountType, senderName: check.senderName, recipientName: check.recipientName });
        const received = await shown({ owner: recipient, type: 'DEPOSIT', state: 'COMPLETED', reference: `withdrawal-in:${id}`, from: senderAddress, toType: check.accountType, senderName: check.senderName, recipientName: check.accountType === 'B2B' ? check.recipientName : null });
        await client.query(`UPDATE withdrawals SET wallet_transaction_id = $2, recipient_transaction_id = $3, from_address = $4, closed_at = now() WHERE id = $1`, [
          id,
          sent.rows[0]?.id,
          received.rows[0]?.id,
          senderAddress,
        ]);
        // Money arriving in a currency the recipient hides (or never added) brings the asset into view.
        await client.query(
          `INSERT INTO account_assets (wallet_account_id, currency) VALUES ($1, $2) ON CONFLICT (wallet_account_id, currency) DO UPDATE SET archived_at = NULL`,
          [recipient, coin.currency],
        );
        await notifyAccountChanged(client, recipient);
      } else {
        await hold(client, { key: `withdrawal:hold:${id}`, kind: 'WITHDRAWAL_HOLD', reference: `withdrawal:${id}`, account, currency: coin.currency, amount: units }).catch(refuse);
        const sent = await shown({ owner: account, type: 'WITHDRAWAL', state: 'IN_PROGRESS', reference: `withdrawal:${id}`, from: null, toType: null, senderName: check.senderName, recipientName: check.recipientName });
        await client.query('UPDATE withdrawals SET wallet_transaction_id = $2 WHERE id = $1', [id, sent.rows[0]?.id]);
      }
      await notifyAccountChanged(client, account);
      await client.query('COMMIT');
      deps.changed?.(account);
      if (check.recipientAccountId) deps.changed?.(check.recipientAccountId);
      const created = await findById(client, account, id);
      if (!created) throw new Error('the withdrawal vanished after its commit');
      return view(created, coin);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function get(account: string, id: string): Promise<WithdrawalView> {
    const row = await findById(pool, account, id);
    if (!row) throw new WithdrawalError('NOT_FOUND', 'No such withdrawal in this account');
    return view(row, coins.get(row.currency));
  }

  /** The account's withdrawals still on their way: the browser watches them to tell the user how they ended. */
  async function listOpen(account: string): Promise<WithdrawalView[]> {
    const result = await pool.query<Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE w.wallet_account_id = $1 AND w.state IN ('PENDING', 'SIGNED', 'BROADCAST') ORDER BY w.created_at LIMIT 100`, [account]);
    return result.rows.map((row) => view(row, coins.get(row.currency)));
  }

  function sameRequest(row: Row, coin: CoinMeta, units: bigint, typed: string): WithdrawalView {
    const sameAddress = row.to_address === typed || row.to_address === canonicalAddress(coin.network, typed);
    if (row.currency !== coin.currency || BigInt(row.amount) !== units || !sameAddress) {
      throw new WithdrawalError('KEY_REUSED', 'This idempotency key was used for another withdrawal');
    }
    return view(row, coin);
  }

  function view(row: Row, coin: CoinMeta | undefined): WithdrawalView {
    const decimals = coin?.decimals ?? 0;
    const amount = BigInt(row.amount);
    const fee = BigInt(row.fee);
    const shownHash = row.state === 'PENDING' || row.state === 'SIGNED' ? null : row.tx_hash;
    return {
      id: row.id,
      account: row.wallet_account_id,
      currency: row.currency,
      network: row.network,
      amount: formatUnits(amount, decimals),
      fee: formatUnits(fee, decimals),
      feeCurrency: row.currency,
      receiveAmount: formatUnits(amount - fee, decimals),
      depositAddress: row.to_address,
      internal: row.kind === 'INTERNAL',
      state: row.state === 'COMPLETED' ? 'COMPLETED' : row.state === 'FAILED' ? 'FAILED' : 'IN_PROGRESS',
      hash: shownHash,
      explorerUrl: (coin && explorerLink(coin.urlScan, shownHash)) ?? null,
      transactionId: row.wallet_transaction_id,
      accountToType: row.account_to_type,
      confirmations: row.confirmations,
      confirmationsRequired: row.confirmations_required,
      failureReason: row.failure_reason,
      createdDate: row.created_at.toISOString(),
      completedDate: row.state === 'COMPLETED' ? (row.closed_at?.toISOString() ?? null) : null,
    };
  }

  return { checkAddress, preliminaryFee, create, get, listOpen, feeOf: (currency: string) => formatUnits(feeOf(coinOf(currency)), coinOf(currency).decimals) };
}

async function findByKey(db: Queryable, account: string, key: string): Promise<Row | undefined> {
  const found = await db.query<Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE w.wallet_account_id = $1 AND w.idempotency_key = $2`, [account, key]);
  return found.rows[0];
}

async function findById(db: Queryable, account: string, id: string): Promise<Row | undefined> {
  const found = await db.query<Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE w.wallet_account_id = $1 AND w.id = $2`, [account, id]);
  return found.rows[0];
}

// ---------------------------------------------------------------------------------------------------------------
// The worker's side: sign, broadcast (or reconcile), confirm. Each row is claimed with FOR UPDATE SKIP LOCKED in
// its own transaction, so several workers share the work and a crashed one gives its rows back with its connection.
// ---------------------------------------------------------------------------------------------------------------

type Claimed = Pick<Row, 'id' | 'wallet_account_id' | 'currency' | 'network' | 'amount' | 'fee' | 'to_address' | 'raw_tx' | 'tx_hash' | 'wallet_transaction_id'>;
const CLAIM_COLUMNS = 'id, wallet_account_id, currency, network, amount, fee, to_address, raw_tx, tx_hash, wallet_transaction_id';

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** PENDING → SIGNED: the hot wallet signs each withdrawal; the raw transaction and its hash are saved before any broadcast. */
export async function signWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger, batch = SIGN_BATCH): Promise<number> {
  return inTransaction(pool, async (client) => {
    // Only networks that are on: one without an adapter keeps its withdrawals (and their holds) until it is back.
    const due = await client.query<Claimed>(
      `SELECT ${CLAIM_COLUMNS} FROM withdrawals WHERE state = 'PENDING' AND network = ANY($2::text[]) ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [batch, chain.networks],
    );
    let signedCount = 0;
    for (const w of due.rows) {
      let signed: Awaited<ReturnType<WithdrawalChainPort['signWithdrawal']>>;
      try {
        signed = await chain.signWithdrawal({ reference: w.id, network: w.network, currency: w.currency, toAddress: w.to_address, amount: BigInt(w.amount) - BigInt(w.fee) });
      } catch (error) {
        // One the signer refuses stays PENDING with its hold; the rest of the batch is signed and kept.
        log.warn({ err: error, withdrawal: w.id }, 'signing failed; it will be tried again');
        continue;
      }
      await client.query(`UPDATE withdrawals SET state = 'SIGNED', raw_tx = $2, tx_hash = $3, from_address = $4, signed_at = now() WHERE id = $1`, [w.id, signed.rawTx, signed.txHash, signed.fromAddress]);
      signedCount += 1;
    }
    return signedCount;
  });
}

/**
 * SIGNED → BROADCAST, one row at a time, fewest attempts first. The chain is asked for the hash first: a transaction
 * it already has (the previous worker died after sending it) is only marked, never sent twice. A refusal for good
 * fails the withdrawal; any other error counts an attempt and leaves it for a later run, behind the others.
 */
export async function broadcastWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger, batch = BROADCAST_BATCH): Promise<number> {
  let done = 0;
  const tried: string[] = [];
  for (let i = 0; i < batch; i += 1) {
    const outcome = await inTransaction(pool, async (client) => {
      const claimed = await client.query<Claimed>(
        `SELECT ${CLAIM_COLUMNS} FROM withdrawals WHERE state = 'SIGNED' AND id <> ALL($1::uuid[]) AND network = ANY($2::text[])
          ORDER BY broadcast_attempts, signed_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [tried, chain.networks],
      );
      const w = claimed.rows[0];
      if (!w || !w.raw_tx || !w.tx_hash) return 'idle' as const;
      tried.push(w.id);
      const ref = { txHash: w.tx_hash, outputIndex: 0 };
      {
        try {
          // The node is asked first (and may be down as well as the broadcast): both failures count the same.
          const known = (await chain.status(w.network, [ref])).get(transferKey(ref));
          if (known?.state === 'SEEN') log.info({ withdrawal: w.id, tx: w.tx_hash }, 'withdrawal already on the chain: reconciled by its hash, not sent again');
          else await chain.broadcast(w.network, w.raw_tx);
        } catch (error) {
          if (!(error instanceof BroadcastRejectedError)) {
            const counted = await client.query<{ broadcast_attempts: number }>('UPDATE withdrawals SET broadcast_attempts = broadcast_attempts + 1 WHERE id = $1 RETURNING broadcast_attempts', [w.id]);
            const attempts = counted.rows[0]?.broadcast_attempts ?? 0;
            // From the tenth failure on it is an error: the user's money is held and someone should look.
            log[attempts >= ALERT_AFTER_ATTEMPTS ? 'error' : 'warn']({ err: error, withdrawal: w.id, attempts }, 'broadcast failed; it will be tried again');
            return 'retry' as const;
          }
          await failWithdrawal(client, w, error.message);
          log.warn({ withdrawal: w.id, reason: error.message }, 'withdrawal refused by the network');
          return 'done' as const;
        }
      }
      await client.query(
        `UPDATE withdrawals SET state = 'BROADCAST', broadcast_at = now(), broadcast_attempts = broadcast_attempts + 1, confirmations_required = $2 WHERE id = $1`,
        [w.id, chain.requiredConfirmations(w.network)],
      );
      const shown = await client.query<{ id: string }>(`UPDATE wallet_transactions SET hash = $2, from_address = coalesce(from_address, $3), updated_at = now() WHERE id = $1 RETURNING id`, [
        w.wallet_transaction_id,
        w.tx_hash,
        (await chain.hotWalletAddress(w.network)) ?? null,
      ]);
      if (shown.rowCount) await notifyAccountChanged(client, w.wallet_account_id);
      return 'done' as const;
    });
    if (outcome === 'idle') break;
    if (outcome === 'done') done += 1;
  }
  return done;
}

/** BROADCAST → COMPLETED once the chain has the confirmations; a transaction that left the chain → FAILED. */
export async function confirmWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<number> {
  const open = await pool.query<{ id: string; network: Network; tx_hash: string; confirmations: number }>(
    `SELECT id, network, tx_hash, confirmations FROM withdrawals WHERE state = 'BROADCAST' AND network = ANY($2::text[]) ORDER BY broadcast_at LIMIT $1`,
    [CONFIRM_BATCH, chain.networks],
  );
  let completed = 0;
  for (const [network, rows] of Map.groupBy(open.rows, (row) => row.network)) {
    const statuses = await chain.status(network, rows.map((r) => ({ txHash: r.tx_hash, outputIndex: 0 })));
    for (const row of rows) {
      const status = statuses.get(transferKey({ txHash: row.tx_hash, outputIndex: 0 }));
      if (!status) continue;
      if (status.state === 'DROPPED') {
        // A real adapter reports DROPPED only once the network has evicted the transaction for good.
        const failed = await claimBroadcast(pool, row.id, (client, w) => failWithdrawal(client, w, 'The transaction left the chain'));
        if (failed) log.warn({ withdrawal: row.id, tx: row.tx_hash }, 'withdrawal dropped from the chain');
      } else if (status.confirmations >= chain.requiredConfirmations(network)) {
        if (await claimBroadcast(pool, row.id, (client, w) => completeWithdrawal(client, w, status.confirmations))) completed += 1;
      } else if (status.confirmations !== row.confirmations) {
        await pool.query(`UPDATE withdrawals SET confirmations = $2 WHERE id = $1 AND state = 'BROADCAST'`, [row.id, status.confirmations]);
      }
    }
  }
  return completed;
}

/** The worker's one job for withdrawals: each step in turn. */
export async function processWithdrawals(pool: pg.Pool, chain: WithdrawalChainPort, log: Logger): Promise<void> {
  await signWithdrawals(pool, chain, log);
  await broadcastWithdrawals(pool, chain, log);
  await confirmWithdrawals(pool, chain, log);
}

async function claimBroadcast(pool: pg.Pool, id: string, work: (client: pg.PoolClient, w: Claimed) => Promise<void>): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const claimed = await client.query<Claimed>(`SELECT ${CLAIM_COLUMNS} FROM withdrawals WHERE id = $1 AND state = 'BROADCAST' FOR UPDATE SKIP LOCKED`, [id]);
    const w = claimed.rows[0];
    if (!w) return false;
    await work(client, w);
    return true;
  });
}

/** Settles the hold: what the recipient receives to the network's world account, the fee to fee income. */
async function completeWithdrawal(client: pg.PoolClient, w: Claimed, confirmations: number): Promise<void> {
  const amount = BigInt(w.amount);
  const fee = BigInt(w.fee);
  const legs = [{ account: systemAccountId(SYSTEM_ACCOUNTS.world(w.network)), amount: amount - fee }];
  if (fee > 0n) legs.push({ account: systemAccountId(SYSTEM_ACCOUNTS.feeIncome()), amount: fee });
  await settle(client, { key: `withdrawal:settle:${w.id}`, kind: 'WITHDRAWAL', reference: `withdrawal:${w.id}`, account: w.wallet_account_id, currency: w.currency, to: legs });
  await client.query(`UPDATE withdrawals SET state = 'COMPLETED', confirmations = $2, closed_at = now() WHERE id = $1`, [w.id, confirmations]);
  await client.query(`UPDATE wallet_transactions SET state = 'COMPLETED', hash = coalesce(hash, $2), completed_at = now(), updated_at = now() WHERE id = $1`, [
    w.wallet_transaction_id,
    w.tx_hash,
  ]);
  await notifyAccountChanged(client, w.wallet_account_id);
}

/** Gives the held amount back and shows the withdrawal as failed. */
async function failWithdrawal(client: pg.PoolClient, w: Claimed, reason: string): Promise<void> {
  await release(client, { key: `withdrawal:release:${w.id}`, kind: 'WITHDRAWAL_RELEASE', reference: `withdrawal:${w.id}`, account: w.wallet_account_id, currency: w.currency, amount: BigInt(w.amount) });
  await client.query(`UPDATE withdrawals SET state = 'FAILED', failure_reason = $2, closed_at = now() WHERE id = $1`, [w.id, reason]);
  await client.query(`UPDATE wallet_transactions SET state = 'FAILED', failure_reason = $2, updated_at = now() WHERE id = $1`, [w.wallet_transaction_id, reason]);
  await notifyAccountChanged(client, w.wallet_account_id);
}
