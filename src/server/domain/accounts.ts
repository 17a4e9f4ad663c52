import type { walletAccounts } from '../db/schema.ts';
import type { Queryable } from './ledger.ts';

type Owner = Pick<typeof walletAccounts.$inferSelect, 'userId'>;

/** The user who owns a wallet account; undefined when no account has this id (a UUID: check it before). */
export async function ownerOf(db: Queryable, account: string): Promise<string | undefined> {
  const result = await db.query<Owner>({ name: 'wallet_account_owner', text: 'SELECT user_id AS "userId" FROM wallet_accounts WHERE id = $1', values: [account] });
  return result.rows[0]?.userId;
}
