/**
 * Finding a user by what an operator has in hand: an e-mail (or its beginning), a user or account id, a Telegram id, a deposit address,
 * or the hash of a deposit's or a withdrawal's transaction (replaced ones too). Each hit says what matched.
 */
import type { Queryable } from '../ledger.ts';
import { OperatorError } from './errors.ts';

export type MatchedBy = 'email' | 'user' | 'account' | 'telegram' | 'address' | 'deposit' | 'withdrawal';
export type SearchHit = { userId: string; email: string | null; accountId: string; matchedBy: MatchedBy; detail: string | null };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TELEGRAM_ID = /^\d{1,15}$/;
const LIMIT = 50;

/** Every user the query points at, at most 50 hits; an empty or over-long query finds nothing. */
export async function searchUsers(db: Queryable, raw: string): Promise<SearchHit[]> {
  const query = raw.trim();
  if (query === '' || query.length > 200) return [];
  const lower = query.toLowerCase();
  const parts: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  const base = (matched: MatchedBy, detail: string) => `SELECT u.id AS "userId", u.email, a.id AS "accountId", '${matched}' AS "matchedBy", ${detail} AS detail`;
  if (query.length >= 3) {
    // An address, or its beginning ("alice", "alice@exa").
    parts.push(`${base('email', 'NULL')} FROM users u JOIN wallet_accounts a ON a.user_id = u.id WHERE starts_with(u.email, ${param(lower)})`);
  }
  if (UUID.test(query)) {
    const id = param(lower);
    parts.push(`${base('user', 'NULL')} FROM users u JOIN wallet_accounts a ON a.user_id = u.id WHERE u.id = ${id}::uuid`);
    parts.push(`${base('account', 'NULL')} FROM wallet_accounts a JOIN users u ON u.id = a.user_id WHERE a.id = ${id}::uuid`);
  }
  if (TELEGRAM_ID.test(query)) {
    parts.push(`${base('telegram', 't.username')} FROM telegram_accounts t JOIN users u ON u.id = t.user_id JOIN wallet_accounts a ON a.user_id = u.id WHERE t.telegram_id = ${param(query)}::bigint`);
  }
  if (!query.includes('@') && !/\s/.test(query)) {
    // Addresses and hashes: hex ones are compared without case (0xAbC… and 0xabc… are one), the rest as written.
    const exact = param(query);
    const folded = param(lower);
    const same = (column: string) => `(${column} = ${exact} OR (${folded} ~ '^(0x)?[0-9a-f]+$' AND lower(${column}) = ${folded}))`;
    parts.push(`${base('address', 'd.network')} FROM deposit_addresses d JOIN wallet_accounts a ON a.id = d.wallet_account_id JOIN users u ON u.id = a.user_id WHERE ${same('d.address')}`);
    parts.push(`${base('deposit', `c.network || ' ' || c.currency`)} FROM chain_deposits c JOIN wallet_accounts a ON a.id = c.wallet_account_id JOIN users u ON u.id = a.user_id WHERE ${same('c.tx_hash')}`);
    parts.push(
      `${base('withdrawal', `w.network || ' ' || w.currency`)} FROM withdrawals w JOIN wallet_accounts a ON a.id = w.wallet_account_id JOIN users u ON u.id = a.user_id
        WHERE ${same('w.tx_hash')} OR ${exact} = ANY(w.replaced_tx_hashes) OR ${folded} = ANY(w.replaced_tx_hashes)`,
    );
  }
  if (parts.length === 0) return [];
  const rows = await db.query<SearchHit>(`SELECT DISTINCT ON ("accountId", "matchedBy") * FROM (${parts.join(' UNION ALL ')}) hits LIMIT ${LIMIT}`, values);
  return rows.rows;
}

/**
 * The wallet account a command names: an account id, or a user (id or e-mail) and then their first account. The
 * command line's `freeze`, `credit`... take any of them.
 */
export async function resolveAccount(db: Queryable, key: string): Promise<{ accountId: string; userId: string }> {
  const given = key.trim();
  const found = await db.query<{ accountId: string; userId: string }>(
    `SELECT a.id AS "accountId", a.user_id AS "userId" FROM wallet_accounts a JOIN users u ON u.id = a.user_id
      WHERE ($1::uuid IS NOT NULL AND (a.id = $1::uuid OR u.id = $1::uuid)) OR u.email = $2
      ORDER BY (a.id = $1::uuid) DESC NULLS LAST, a.created_at LIMIT 1`,
    [UUID.test(given) ? given.toLowerCase() : null, given.toLowerCase()],
  );
  const row = found.rows[0];
  if (!row) throw new OperatorError('OPERATOR_ACCOUNT_NOT_FOUND', `No account or user is ${given}`);
  return row;
}
