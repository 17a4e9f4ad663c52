import { test as base, expect } from './fixtures.ts';
import { startLitecoind, type Litecoind } from '../support/litecoind.ts';

/**
 * The e2e server on a Litecoin Core -regtest node of the worker's own (litecoin.spec.ts, waiting-for-funds.spec.ts):
 * two confirmations, a fixed fee rate and withdrawal fee, a worker polling every 200 ms, prices that do not walk.
 */
export const test = base.extend<object, { node: Litecoind; nodeOf: string }>({
  /**
   * Whose node (and server) this is. Playwright gives files of equal worker options one worker, so the two specs
   * would share a node: a spec whose tests count the custody's coins (waiting-for-funds: the hot wallet holds exactly
   * 0.01 LTC) names itself here and gets a node no other spec has paid into.
   */
  nodeOf: ['litecoin', { scope: 'worker', option: true }],
  node: [
    async ({ nodeOf }, use) => {
      const node = await startLitecoind([], nodeOf);
      await use(node);
      await node.stop();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  appEnv: [
    async ({ node }, use) =>
      use({
        LOG_LEVEL: 'info',
        CHAIN_ENV: 'regtest',
        LITECOIN_RPC_URL: node.url,
        CONFIRMATIONS: 'LITECOIN:2',
        FEE_RATE_FALLBACK: 'LITECOIN:5',
        WORKER_POLL_MS: '200',
        RATES_WALK_MS: '0',
        WITHDRAWAL_FEES: JSON.stringify({ LTC: '0.001' }),
      }),
    { scope: 'worker' },
  ],
});

/**
 * Mines a block at a time until `probe` is true (the worker polls every 200 ms, the page its balances). A node or
 * server busy on this shared machine may drop one call: the next poll asks again.
 */
export async function mineUntil(node: Litecoind, probe: () => Promise<boolean>, timeout = 45_000): Promise<void> {
  await expect
    .poll(
      async () => {
        if (await probe().catch(() => false)) return true;
        await node.mine(1).catch(() => undefined);
        return false;
      },
      { timeout, intervals: [1_000] },
    )
    .toBe(true);
}
