/**
 * One ledger:audit check: a query that returns the rows breaking an invariant (no rows is a pass). `sampled`, for a
 * check that reads every posting: the same invariant over a random sample (`:percent` of the table's pages), for a
 * ledger too large for a full pass in the time an audit may take (`npm run ledger:audit -- --sample <percent>`).
 */
export type AuditCheck = { name: string; sql: string; sampled?: string };
