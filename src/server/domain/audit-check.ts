/** One ledger:audit check: a query that returns the rows breaking an invariant (no rows is a pass). */
export type AuditCheck = { name: string; sql: string };
