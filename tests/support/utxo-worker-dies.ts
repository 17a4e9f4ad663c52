/**
 * A worker that dies (SIGKILL, as kill -9) at a chosen point of a withdrawal: after signing (UTXO_DIE_AFTER=signed:
 * the raw transaction recorded, nothing sent) or after sending it without recording the broadcast
 * (UTXO_DIE_AFTER=sent). Run by the UTXO tests as a child process with the server's environment.
 */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/server/config.ts';
import { openCustody } from '../../src/server/custody.ts';
import { openDatabase } from '../../src/server/db/database.ts';
import { createLogger } from '../../src/server/log.ts';
import { signWithdrawals } from '../../src/server/domain/withdrawals/worker.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const config = loadConfig(process.env, version);
const log = createLogger('warn');
const database = await openDatabase(config, log);
const custody = await openCustody(config, log, database.pool, { owner: false });
await signWithdrawals(database.pool, custody.chain, log);
if (process.env.UTXO_DIE_AFTER === 'sent') {
  const signed = await database.pool.query<{ network: 'LITECOIN'; raw_tx: string }>(`SELECT network, raw_tx FROM withdrawals WHERE state = 'SIGNED'`);
  for (const row of signed.rows) await custody.chain.broadcast(row.network, row.raw_tx);
}
process.stdout.write('dying\n');
process.kill(process.pid, 'SIGKILL');
