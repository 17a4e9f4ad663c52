/** Reading an order table's rows under the schema's names: by id (in an account), by idempotency key, or locked. */
import { getTableName, type Table } from 'drizzle-orm';
import { selectColumns } from '../../db/columns.ts';
import type { Queryable } from '../ledger.ts';

export function orderReader<T extends Table, K extends keyof T['$inferSelect'] & string>(table: T, fields: readonly K[]) {
  type Row = Pick<T['$inferSelect'], K>;
  const name = getTableName(table);
  /** The row's columns as `o.…`, for a SELECT from (or RETURNING of) `<table> o`. */
  const columns = selectColumns(table, 'o', fields);
  const first = async (db: Queryable, where: string, values: unknown[]): Promise<Row | undefined> =>
    (await db.query<Row>(`SELECT ${columns} FROM ${name} o WHERE ${where}`, values)).rows[0];
  return {
    columns,
    byId: (db: Queryable, id: string, account?: string) =>
      account === undefined ? first(db, 'o.id = $1', [id]) : first(db, 'o.id = $1 AND o.wallet_account_id = $2', [id, account]),
    byKey: (db: Queryable, account: string, key: string) => first(db, 'o.wallet_account_id = $1 AND o.idempotency_key = $2', [account, key]),
    /** The order under a row lock, so one change at a time decides what happens to it. */
    lock: (db: Queryable, id: string) => first(db, 'o.id = $1 FOR UPDATE', [id]),
  };
}
