/**
 * A worker that dies (SIGKILL, as kill -9) at a chosen point of a withdrawal: after signing (UTXO_DIE_AFTER=signed:
 * the raw transaction recorded, nothing sent) or after sending it without recording the broadcast
 * (UTXO_DIE_AFTER=sent). With UTXO_BATCH_SECONDS set, also after gathering a batch (=batched: the batch row and its
 * members committed, nothing signed) and after the adapter signed and stored a batch's transaction but before the
 * worker recorded it on its members (=batch-signed: they are still PENDING). Run by the UTXO tests as a child process
 * with the server's environment.
 */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/server/config.ts';
import { openCustody } from '../../src/server/custody.ts';
import { openDatabase } from '../../src/server/db/database.ts';
import { createLogger } from '../../src/server/log.ts';
import { formBatches, signBatches, signWithdrawals } from '../../src/server/domain/withdrawals/worker.ts';
import { subtractUnits } from '../../src/lib/money.ts';
import { unitsFromRow } from '../../src/server/db/amounts.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const config = loadConfig(process.env, version);
const log = createLogger('warn');
const database = await openDatabase(config, log);
const custody = await openCustody(config, log, database.pool, { owner: false });
const dieAfter = process.env.UTXO_DIE_AFTER;
await formBatches(database.pool, custody.chain, log);
if (dieAfter === 'batch-signed') {
  const batches = await database.pool.query<{ id: string; network: 'LITECOIN' }>('SELECT id, network FROM withdrawal_batches WHERE signed_at IS NULL');
  for (const batch of batches.rows) {
    const members = await database.pool.query<{ to_address: string; amount: string; fee: string }>(
      `SELECT to_address, amount::text, fee::text FROM withdrawals WHERE batch_id = $1 AND state = 'PENDING' ORDER BY id`,
      [batch.id],
    );
    await custody.chain.signBatch?.({ reference: batch.id, network: batch.network, orders: members.rows.map((m) => ({ toAddress: m.to_address, amount: subtractUnits(unitsFromRow(m.amount), unitsFromRow(m.fee, 'fee')) })) });
  }
} else if (dieAfter !== 'batched') {
  await signBatches(database.pool, custody.chain, log);
  await signWithdrawals(database.pool, custody.chain, log);
}
if (dieAfter === 'sent') {
  const signed = await database.pool.query<{ network: 'LITECOIN'; raw_tx: string }>(`SELECT DISTINCT network, raw_tx FROM withdrawals WHERE state = 'SIGNED'`);
  for (const row of signed.rows) await custody.chain.broadcast(row.network, row.raw_tx);
}
process.stdout.write('dying\n');
process.kill(process.pid, 'SIGKILL');
