import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { startLitecoind, type Litecoind } from '../../support/litecoind.ts';
import { freePort } from '../../support/server.ts';
import { waitFor } from '../../support/custody.ts';

type Ready = { status: string; reasons?: string[] };

/**
 * Readiness against a real node: a server on Litecoin Core -regtest (the worker scanning it) is ready; with the node
 * stopped `/api/ready` answers 503 naming it while `/api/health` stays 200 and the metrics show the node down; with
 * the node back on the same port and data directory it is ready again.
 */
describe('readiness follows the Litecoin Core node', () => {
  let node: Litecoind;
  let database: TestDatabase;
  let server: InProcessServer;
  let metricsPort: number;
  const ready = async (): Promise<{ status: number; body: Ready }> => {
    const response = await fetch(`${server.url}/api/ready`);
    return { status: response.status, body: (await response.json()) as Ready };
  };
  const nodeUp = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return /^wallet_chain_node_up\{network="LITECOIN"\} (\d)$/m.exec(text)?.[1];
  };

  beforeAll(async () => {
    node = await startLitecoind();
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    metricsPort = await freePort();
    server = await startInProcess({
      ...testServerEnv(database.url),
      WORKER_POLL_MS: '100',
      CHAIN_ENV: 'regtest',
      LITECOIN_RPC_URL: node.url,
      METRICS_PORT: String(metricsPort),
    });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await database?.drop();
    await node?.stop();
  });

  it('is ready with the node up, 503 naming it while it is down (health stays 200), ready again when it returns', async () => {
    await waitFor('ready with the node up', async () => (await ready()).status === 200, 30_000);
    expect((await ready()).body).toEqual({ status: 'ready' });
    expect(await nodeUp()).toBe('1');

    await node.halt();
    const down = await waitFor('not ready with the node down', async () => {
      const answer = await ready();
      return answer.status === 503 && answer;
    }, 30_000);
    expect(down.body.status).toBe('not ready');
    expect(down.body.reasons).toEqual([expect.stringMatching(/^LITECOIN: the node is unreachable \(.+\)$/)]);
    const health = await fetch(`${server.url}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', database: 'up' });
    await waitFor('the metrics to show the node down', async () => (await nodeUp()) === '0', 30_000);

    await node.restart();
    await waitFor('ready again with the node back', async () => (await ready()).status === 200, 30_000);
    expect((await ready()).body).toEqual({ status: 'ready' });
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });
});
