/**
 * The values an order's update may assign: a parameter, the database's now(), a parameter only where the column is
 * empty, or a parameter added to the column's value (a counter, a running sum; negative to take away).
 */
export const NOW: unique symbol = Symbol('now()');
export type Assign = string | number | bigint | boolean | null | typeof NOW | { ifNull: string | number | bigint | null } | { add: number | bigint };

/** `column = …` clauses for an UPDATE, their parameters appended to `values` (column names come from code, never input). */
export function setClauses(set: Readonly<Record<string, Assign>>, values: unknown[]): string[] {
  const param = (value: string | number | bigint | boolean | null) => {
    values.push(typeof value === 'bigint' ? value.toString() : value);
    return `$${values.length}`;
  };
  return Object.entries(set).map(([column, assign]) => {
    if (assign === NOW) return `${column} = now()`;
    if (typeof assign === 'object' && assign !== null && 'add' in assign) return `${column} = ${column} + ${param(assign.add)}`;
    if (typeof assign === 'object' && assign !== null) return `${column} = coalesce(${column}, ${param(assign.ifNull)})`;
    return `${column} = ${param(assign)}`;
  });
}
