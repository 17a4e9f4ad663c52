import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { litecoinCustody } from '../../support/litecoin-custody.ts';
import type { Litecoind } from '../../support/litecoind.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { keepHotWallet } from '../../../src/server/domain/hot-cold.ts';
import type { Custody } from '../../../src/server/custody.ts';
import { quietLog, waitFor } from '../../support/custody.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import type { WithdrawalView } from '../../../src/server/domain/withdrawals/view.ts';
import { stuckWork } from '../../../src/server/domain/operator/stuck.ts';
import type { InProcessServer } from '../../support/in-process.ts';

/**
 * Hot and cold on Litecoin Core regtest: the excess above HOT_WALLET_MAX goes to the cold address on chain, booked
 * with its fee; a withdrawal the hot wallet cannot pay waits (PENDING, waiting_for_funds_since) instead of being
 * signed, shown to its user "Pending" with that reason (pendingReason on the history item, the details and the
 * withdrawal) and counted in /metrics (wallet_withdrawals_waiting_for_funds), then goes out once the hot wallet is
 * refilled and the reason and the count are gone.
 */
/** The value of one series in Prometheus' text format (`name{labels}` exactly as rendered), undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('hot and cold on Litecoin Core regtest', () => {
  // METRICS_PORT 0: the server's /metrics on a port of its own choosing.
  const lc = litecoinCustody({ emailPrefix: 'hotcold', env: { METRICS_PORT: '0' } });
  const { work, mine, withdraw, funded, completed, matching, history, call, at } = lc;
  let node: Litecoind;
  let database: Database;
  let custody: Custody;
  let server: InProcessServer;

  beforeAll(async () => {
    ({ node, database, custody, server } = await lc.start());
  }, 120_000);
  afterAll(() => lc.close());

  const settings = (cold: string, max: bigint) => ({ max: { LITECOIN: max }, min: {}, cold: { LITECOIN: { address: cold } } });

  it('sweeps what is above the ceiling to the cold address, once, booked with its fee', async () => {
    await funded('ceiling', '2');
    const cold = await node.newAddress();
    const deps = { chain: custody.chain, addresses: custody.addresses, env: 'regtest' as const, settings: settings(cold, 50_000_000n), consolidateBelow: {}, log: quietLog };
    await keepHotWallet(database.pool, deps, 'LITECOIN');
    // A second round while the first is in flight sweeps nothing more.
    await keepHotWallet(database.pool, deps, 'LITECOIN');
    const rows = await database.pool.query<{ amount: string; to_address: string; state: string }>(`SELECT amount::text, to_address, state FROM custody_movements WHERE idempotency_key LIKE 'hot-ceiling:%'`);
    expect(rows.rows).toEqual([{ amount: '150000000', to_address: cold, state: 'BROADCAST' }]);
    for (let i = 0; i < 3; i += 1) await mine(1);
    expect(await node.received(cold)).toBe(150_000_000n);
    expect((await database.pool.query(`SELECT state FROM custody_movements WHERE idempotency_key LIKE 'hot-ceiling:%'`)).rows).toEqual([{ state: 'COMPLETED' }]);
    expect(await matching()).toMatchObject({ matches: true, cold: 150_000_000n });
    // At the ceiling now (less the fee): nothing more to sweep.
    await keepHotWallet(database.pool, deps, 'LITECOIN');
    expect((await database.pool.query(`SELECT 1 FROM custody_movements WHERE idempotency_key LIKE 'hot-ceiling:%'`)).rowCount).toBe(1);
  }, 120_000);

  it('keeps a withdrawal the hot wallet cannot pay waiting, then sends it once the hot wallet is refilled', async () => {
    // The hot wallet holds about 0.5 LTC after the sweep; this user's 1 LTC comes in only after the withdrawal is asked.
    const user = await funded('waiting', '0.4');
    const other = await lc.signUp('late');
    const to = await node.newAddress();
    // 0.4 of the user plus 0.5 left: a withdrawal of 0.9… is more than the user holds; instead the hot wallet is emptied by a cold sweep first.
    const cold = await node.newAddress();
    const deps = { chain: custody.chain, addresses: custody.addresses, env: 'regtest' as const, settings: settings(cold, 1_000_000n), consolidateBelow: {}, log: quietLog };
    await keepHotWallet(database.pool, deps, 'LITECOIN');
    for (let i = 0; i < 3; i += 1) await mine(1);
    const answer = await withdraw(user, '0.4', to);
    expect(answer.status).toBe(200);
    const id = answer.body.id;
    await work();
    await work();
    const row = async () => (await database.pool.query<{ state: string; waiting: boolean }>('SELECT state, waiting_for_funds_since IS NOT NULL AS waiting FROM withdrawals WHERE id = $1', [id])).rows[0];
    expect(await row()).toEqual({ state: 'PENDING', waiting: true });
    expect((await database.pool.query(`SELECT 1 FROM utxo_transactions WHERE reference = $1`, [id])).rowCount).toBe(0);
    // The user is told why: on the history item, its details and the withdrawal itself.
    const item = async () => (await history(user)).find((t) => t.transactionType === 'WITHDRAWAL');
    expect(await item()).toMatchObject({ state: 'IN_PROGRESS', pendingReason: 'WAITING_FOR_FUNDS', underReview: false, amount: '0.4' });
    const txId = (await item())?.id ?? '';
    const details = async () => (await call<TransactionItem>(user, 'GET', at(user, `/asset/transaction/${txId}?type=WITHDRAWAL`))).body;
    expect(await details()).toMatchObject({ id: txId, state: 'IN_PROGRESS', pendingReason: 'WAITING_FOR_FUNDS' });
    expect((await call<WithdrawalView>(user, 'GET', at(user, `/withdrawal/${id}`))).body).toMatchObject({ state: 'IN_PROGRESS', pendingReason: 'WAITING_FOR_FUNDS' });
    // The operator's figures: one waiting on LITECOIN (the series read through a 5 s cache), none elsewhere.
    await waitingMetric('LITECOIN', 1);
    expect(sample(await scrape(), 'wallet_withdrawals_waiting_for_funds_oldest_seconds{network="LITECOIN"}')).toBeGreaterThanOrEqual(0);
    // The console's Stuck work, once it is older than its threshold: how long it has waited for funds (aged here by hand).
    await database.pool.query(`UPDATE withdrawals SET created_at = created_at - interval '2 minutes', waiting_for_funds_since = waiting_for_funds_since - interval '90 seconds' WHERE id = $1`, [id]);
    expect((await stuckWork(database.pool, 1)).items.find((i) => i.id === id)).toMatchObject({ kind: 'withdrawal', state: 'PENDING', waitingSeconds: expect.any(Number) });
    expect((await stuckWork(database.pool, 1)).items.find((i) => i.id === id)?.waitingSeconds).toBeGreaterThanOrEqual(90);
    // The operator refills the hot wallet (a deposit is as good): the withdrawal goes out and completes.
    await node.send(await lc.addressOf(other), '1');
    await mine(1);
    await mine(1);
    await work();
    await completed(id);
    expect(await node.received(to)).toBe(39_900_000n);
    expect(await row()).toEqual({ state: 'COMPLETED', waiting: false });
    // Sent: no reason any more, and nothing waits.
    expect(await item()).toMatchObject({ state: 'COMPLETED', pendingReason: null });
    expect(await details()).toMatchObject({ state: 'COMPLETED', pendingReason: null });
    await waitingMetric('LITECOIN', 0);
  }, 180_000);

  /** The server's /metrics text. */
  const scrape = async () => {
    expect(server.metricsPort).toEqual(expect.any(Number));
    const response = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`);
    expect(response.status).toBe(200);
    return response.text();
  };
  /** Waits until wallet_withdrawals_waiting_for_funds of `network` reads `expected` (the figures are cached 5 s); fails after 20 s. */
  const waitingMetric = async (network: string, expected: number) => {
    await waitFor(`wallet_withdrawals_waiting_for_funds{network="${network}"} to read ${expected}`, async () => sample(await scrape(), `wallet_withdrawals_waiting_for_funds{network="${network}"}`) === expected, 20_000);
  };
});
