import { test as base } from './fixtures.ts';
import { startLitecoind, type Litecoind } from '../support/litecoind.ts';

/**
 * The e2e server on a Litecoin Core -regtest node of the worker's own (litecoin.spec.ts, waiting-for-funds.spec.ts):
 * two confirmations, a fixed fee rate and withdrawal fee, a worker polling every 200 ms, prices that do not walk.
 */
export const test = base.extend<object, { node: Litecoind }>({
  node: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const node = await startLitecoind();
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
