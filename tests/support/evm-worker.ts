/**
 * A worker process of its own for the Ethereum tests (run with `node`): opens the custody on EVM_DATABASE_URL with
 * ETHEREUM on EVM_RPC_URL and EVM_TOKENS, then by EVM_MODE
 * - `work`: signs one withdrawal at a time and broadcasts, until none is PENDING or SIGNED;
 * - `sign-then-hang`: signs every pending withdrawal, says `signed` on stdout and waits to be killed;
 * - `send-then-hang`: signs, sends the raw transactions itself (not through the worker), says `sent` and waits.
 */
import { broadcastWithdrawals, signWithdrawals } from '../../src/server/domain/withdrawals/worker.ts';
import { quietLog } from './custody.ts';
import { openEvmCustody, type EvmTokens } from './evm-custody.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const { database, custody } = await openEvmCustody(env('EVM_DATABASE_URL'), { url: env('EVM_RPC_URL') }, JSON.parse(env('EVM_TOKENS')) as EvmTokens);
const pool = database.pool;
const open = async () => Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM withdrawals WHERE state IN ('PENDING', 'SIGNED')`)).rows[0]?.n ?? 0);
const mode = env('EVM_MODE');
if (mode === 'work') {
  while ((await open()) > 0) {
    await signWithdrawals(pool, custody.chain, quietLog, 1);
    await broadcastWithdrawals(pool, custody.chain, quietLog, 1);
  }
  await database.close();
  process.exit(0);
}
await signWithdrawals(pool, custody.chain, quietLog);
if (mode === 'send-then-hang') {
  const signed = await pool.query<{ raw_tx: string }>(`SELECT raw_tx FROM withdrawals WHERE state = 'SIGNED'`);
  for (const row of signed.rows) await custody.chain.broadcast('ETHEREUM', row.raw_tx);
  process.stdout.write('sent\n');
} else {
  process.stdout.write('signed\n');
}
setInterval(() => {}, 1_000);
