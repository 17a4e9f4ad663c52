/**
 * npm run ledger:audit: proves the ledger's invariants over the whole database and exits 1 if any fails.
 * Safe beside a running server: the checks read one consistent snapshot.
 */
import { auditLedger } from '../domain/ledger-audit.ts';
import { openTool } from './tool.ts';

const { database } = await openTool();
const client = await database.pool.connect();
let failed = 0;
try {
  const results = await auditLedger(client);
  for (const result of results) {
    process.stdout.write(`${result.ok ? 'ok  ' : 'FAIL'}  ${result.name}\n`);
    for (const problem of result.problems) process.stdout.write(`        ${JSON.stringify(problem)}\n`);
    if (!result.ok) failed++;
  }
  const counts = await client.query<{ entries: string; postings: string; balances: string }>(
    `SELECT (SELECT count(*) FROM ledger_entries) AS entries, (SELECT count(*) FROM ledger_postings) AS postings,
            (SELECT count(*) FROM ledger_balances) AS balances`,
  );
  const c = counts.rows[0];
  process.stdout.write(`ledger audit: ${results.length - failed} passed, ${failed} failed (${c?.entries} entries, ${c?.postings} postings, ${c?.balances} balances)\n`);
} finally {
  client.release();
  await database.close();
}
process.exit(failed === 0 ? 0 : 1);
