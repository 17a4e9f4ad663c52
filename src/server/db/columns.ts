import { getTableColumns, type Table } from 'drizzle-orm';

/**
 * A select list for raw SQL whose rows have the Drizzle row type: `w.wallet_account_id AS "walletAccountId", …`, so a
 * hot path can stay one `pool.query` and still type its rows as `Pick<typeof table.$inferSelect, …>`.
 */
export function selectColumns<T extends Table, K extends keyof T['$inferSelect'] & string>(table: T, alias: string, fields: readonly K[]): string {
  const columns = getTableColumns(table) as Record<string, { name: string }>;
  return fields
    .map((field) => {
      const column = columns[field];
      if (!column) throw new Error(`no column for ${field}`);
      return `${alias}.${column.name} AS "${field}"`;
    })
    .join(', ');
}
