/**
 * npm run ledger:audit: proves the ledger's invariants over the whole database and exits 1 if any fails.
 * Safe beside a running server: the checks read one consistent snapshot. `-- --sample <percent>`: the checks that
 * read every posting read a random sample of that percentage instead (a ledger of tens of millions of postings).
 */
import { auditLedger } from '../domain/ledger-audit.ts';
import { openTool } from './tool.ts';

const at = process.argv.indexOf('--sample');
const sample = at < 0 ? undefined : Number(process.argv[at + 1]);
if (sample !== undefined && !(sample > 0 && sample <= 100)) {
  process.stderr.write('--sample takes a percentage above 0 and at most 100 (e.g. --sample 0.1)\n');
  process.exit(2);
}
const { database } = await openTool();
const client = await database.pool.connect();
let failed = 0;
try {
  const results = await auditLedger(client, undefined, sample === undefined ? {} : { sample });
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
  process.stdout.write(`ledger audit${sample === undefined ? '' : ` (postings sampled: ${sample} %)`}: ${results.length - failed} passed, ${failed} failed (${c?.entries} entries, ${c?.postings} postings, ${c?.balances} balances)\n`);
} finally {
  client.release();
  await database.close();
}
process.exit(failed === 0 ? 0 : 1);
