/**
 * A user as operators see them: profile, accounts with their withdrawal freeze, balances, recent ledger entries
 * (paged), orders of every kind with their states, deposits, sign-in and passcode lockouts, linked Telegram, and
 * the operator adjustments and audit lines about them. Amounts are decimal strings of their currency.
 */
import { formatUnits } from '../../../lib/amount.ts';
import { findCoin } from '../../../lib/currencies.ts';
import type { Queryable } from '../ledger.ts';
import { OperatorError } from './errors.ts';

const TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
const decimal = (currency: string, units: string | null): string | null => (units === null ? null : formatUnits(BigInt(units), findCoin(currency)?.decimals ?? 0));

export type LedgerLine = { entryId: number; key: string; kind: string; reference: string | null; currency: string; bucket: string; amount: string; at: string };
export type OrderLine = { flow: 'withdrawal' | 'swap' | 'sell' | 'buy'; id: string; accountId: string; state: string; currency: string; amount: string; detail: string | null; createdAt: string };

export type UserView = {
  user: { id: string; email: string | null; emailConfirmed: boolean; language: string; createdAt: string; role: string | null };
  accounts: { id: string; name: string; createdAt: string; withdrawalsFrozenAt: string | null; withdrawalsFrozenReason: string | null }[];
  balances: { accountId: string; currency: string; available: string; onHold: string }[];
  ledger: LedgerLine[];
  orders: OrderLine[];
  deposits: { id: string; accountId: string; network: string; currency: string; amount: string; state: string; txHash: string; confirmations: number; confirmationsRequired: number; detectedAt: string }[];
  signIn: { failures: number; lockedUntil: string | null; sessionsRevokedAt: string | null };
  passcode: { set: boolean; failures: number; lockedUntil: string | null; blockedAt: string | null } | null;
  telegram: { telegramId: string; username: string | null; linkedAt: string } | null;
};

export async function userView(db: Queryable, userId: string): Promise<UserView> {
  const found = await db.query<UserView['user'] & { sessionsRevokedAt: string | null }>(
    `SELECT u.id, u.email, u.email_confirmed_at IS NOT NULL AS "emailConfirmed", u.language, ${TIME('u.created_at')} AS "createdAt", r.role,
            ${TIME('u.sessions_revoked_at')} AS "sessionsRevokedAt"
       FROM users u LEFT JOIN operator_roles r ON r.user_id = u.id WHERE u.id = $1`,
    [userId],
  );
  const row = found.rows[0];
  if (!row) throw new OperatorError('OPERATOR_USER_NOT_FOUND', `No user ${userId}`);
  const { sessionsRevokedAt, ...user } = row;
  const accounts = await db.query<UserView['accounts'][number]>(
    `SELECT id, name, ${TIME('created_at')} AS "createdAt", ${TIME('withdrawals_frozen_at')} AS "withdrawalsFrozenAt", withdrawals_frozen_reason AS "withdrawalsFrozenReason"
       FROM wallet_accounts WHERE user_id = $1 ORDER BY created_at`,
    [userId],
  );
  const ids = accounts.rows.map((a) => a.id);
  const balances = await db.query<{ accountId: string; currency: string; available: string; onHold: string }>(
    `SELECT ledger_account_id AS "accountId", currency, available::text, on_hold::text AS "onHold" FROM ledger_balances
      WHERE ledger_account_id = ANY($1::uuid[]) ORDER BY currency`,
    [ids],
  );
  const orders = await db.query<OrderLine>(
    `SELECT flow, id, "accountId", state, currency, amount, detail, ${TIME('created_at')} AS "createdAt" FROM (
       SELECT 'withdrawal' AS flow, id::text, wallet_account_id::text AS "accountId", state, currency, amount::text, kind || ' ' || to_address AS detail, created_at FROM withdrawals WHERE wallet_account_id = ANY($1::uuid[])
       UNION ALL SELECT 'swap', id::text, wallet_account_id::text, state, source_currency, source_amount::text, '→ ' || destination_currency, created_at FROM swap_orders WHERE wallet_account_id = ANY($1::uuid[])
       UNION ALL SELECT 'sell', id::text, wallet_account_id::text, state, currency, amount::text, fiat_currency, created_at FROM sell_orders WHERE wallet_account_id = ANY($1::uuid[])
       UNION ALL SELECT 'buy', id::text, wallet_account_id::text, state, currency, amount::text, fiat_currency, created_at FROM buy_orders WHERE wallet_account_id = ANY($1::uuid[])
     ) o ORDER BY created_at DESC LIMIT 100`,
    [ids],
  );
  const deposits = await db.query<UserView['deposits'][number]>(
    `SELECT id::text, wallet_account_id::text AS "accountId", network, currency, amount::text, state, tx_hash AS "txHash", confirmations, confirmations_required AS "confirmationsRequired",
            ${TIME('detected_at')} AS "detectedAt"
       FROM chain_deposits WHERE wallet_account_id = ANY($1::uuid[]) ORDER BY detected_at DESC LIMIT 100`,
    [ids],
  );
  const throttle = await db.query<{ failures: number; lockedUntil: string | null }>(`SELECT failures, ${TIME('locked_until')} AS "lockedUntil" FROM login_throttle WHERE key = $1`, [`email:${user.email ?? ''}`]);
  const passcode = await db.query<NonNullable<UserView['passcode']>>(
    `SELECT pin_hash IS NOT NULL AS set, failures, ${TIME('locked_until')} AS "lockedUntil", ${TIME('blocked_at')} AS "blockedAt" FROM user_pincodes WHERE user_id = $1`,
    [userId],
  );
  const telegram = await db.query<NonNullable<UserView['telegram']>>(`SELECT telegram_id::text AS "telegramId", username, ${TIME('linked_at')} AS "linkedAt" FROM telegram_accounts WHERE user_id = $1`, [userId]);
  return {
    user,
    accounts: accounts.rows,
    balances: balances.rows.map((b) => ({ ...b, available: decimal(b.currency, b.available) ?? '0', onHold: decimal(b.currency, b.onHold) ?? '0' })),
    ledger: await ledgerLines(db, ids, {}),
    orders: orders.rows.map((o) => ({ ...o, amount: decimal(o.currency, o.amount) ?? '0' })),
    deposits: deposits.rows.map((d) => ({ ...d, amount: decimal(d.currency, d.amount) ?? '0' })),
    signIn: { failures: throttle.rows[0]?.failures ?? 0, lockedUntil: throttle.rows[0]?.lockedUntil ?? null, sessionsRevokedAt },
    passcode: passcode.rows[0] ?? null,
    telegram: telegram.rows[0] ?? null,
  };
}

/** The accounts' postings, newest first, 50 a page before entry `before`. */
export async function ledgerLines(db: Queryable, accountIds: readonly string[], page: { before?: number | undefined }): Promise<LedgerLine[]> {
  const rows = await db.query<Omit<LedgerLine, 'entryId'> & { entryId: string }>(
    `SELECT e.id AS "entryId", e.idempotency_key AS key, e.kind, e.reference, p.currency, p.bucket, p.amount::text AS amount, ${TIME('e.created_at')} AS at
       FROM ledger_postings p JOIN ledger_entries e ON e.id = p.entry_id
      WHERE p.ledger_account_id = ANY($1::uuid[]) AND ($2::bigint IS NULL OR p.entry_id < $2)
      ORDER BY p.entry_id DESC, p.id DESC LIMIT 50`,
    [accountIds, page.before ?? null],
  );
  return rows.rows.map((r) => ({ ...r, entryId: Number(r.entryId), amount: decimal(r.currency, r.amount) ?? '0' }));
}

/** The accounts of a user (for paging the ledger of one user). */
export async function accountsOf(db: Queryable, userId: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>('SELECT id FROM wallet_accounts WHERE user_id = $1', [userId]);
  return rows.rows.map((r) => r.id);
}
