import { getTableColumns, type Table } from 'drizzle-orm';

/**
 * The select list of a Drizzle table for raw SQL: every column aliased to its key in the schema, so a row read with
 * `pool.query` has the type `typeof table.$inferSelect` (no hand-typed row, no `SELECT *`). `qualifier` prefixes
 * each column with a table alias for joins.
 */
export function selectList(table: Table, qualifier?: string): string {
  const prefix = qualifier ? `${qualifier}.` : '';
  return Object.entries(getTableColumns(table))
    .map(([key, column]) => `${prefix}"${column.name}" AS "${key}"`)
    .join(', ');
}
