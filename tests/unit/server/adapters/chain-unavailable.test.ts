import { describe, expect, it } from 'vitest';
import { createServer, type Socket } from 'node:net';
import { Hono } from 'hono';
import { isUnanswered, routeChains } from '../../../../src/server/adapters/chains/open.ts';
import { ChainOffError, ChainUnavailableError, type ChainAdapter } from '../../../../src/server/adapters/chains/port.ts';
import { createRpc, RpcError, RpcUnavailableError } from '../../../../src/server/adapters/chains/utxo/rpc.ts';
import { TonApiError } from '../../../../src/server/adapters/chains/ton/api.ts';
import { callTimeoutMs, withinBudget } from '../../../../src/server/net/call-budget.ts';
import { errorResponse } from '../../../../src/server/http/errors.ts';
import { createLogger } from '../../../../src/server/log.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

/** An adapter whose every node call is `answer()`. */
function adapterAnswering(answer: () => Promise<never>): ChainAdapter {
  return {
    networks: ['LITECOIN'],
    requiredConfirmations: () => 1,
    scan: answer,
    status: answer,
    explorerUrl: () => undefined,
    hotWalletAddress: answer,
    signWithdrawal: answer,
    broadcast: answer,
    estimateFee: answer,
    replaceByFee: answer,
    holdings: answer,
    collection: { sweeps: () => false, sweep: answer, topUpGas: answer },
  };
}
const never = () => new Promise<never>(() => {});

describe('a node that does not answer', () => {
  it('gives up within the request budget, naming the network; outside a request the adapter keeps its own timeout', async () => {
    const chain = routeChains({ LITECOIN: adapterAnswering(never) });
    const from = Date.now();
    const refused = await withinBudget(200, () => chain.hotWalletAddress('LITECOIN')).catch((error: unknown) => error);
    expect(Date.now() - from).toBeLessThan(400);
    expect(refused).toBeInstanceOf(ChainUnavailableError);
    expect(refused).toMatchObject({ network: 'LITECOIN', message: 'LITECOIN: the node did not answer within 200 ms' });
    // Two calls of one request share its budget.
    const shared = Date.now();
    await withinBudget(300, async () => {
      await chain.estimateFee({ network: 'LITECOIN', currency: 'LTC', toAddress: 'x', amount: unitsOf(1n) }).catch(() => undefined);
      await chain.hotWalletAddress('LITECOIN').catch(() => undefined);
    });
    expect(Date.now() - shared).toBeLessThan(500);
    // No budget: nothing cuts the call short (the adapter's own timeout does).
    const outside = await Promise.race([chain.hotWalletAddress('LITECOIN').then(() => 'answered', () => 'refused'), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 300))]);
    expect(outside).toBe('still waiting');
  });

  it("bounds each call by what is left of the request's budget, or the client's own timeout outside one", async () => {
    expect(callTimeoutMs(30_000)).toBe(30_000);
    await withinBudget(3_500, async () => {
      expect(callTimeoutMs(30_000)).toBeLessThanOrEqual(3_500);
      expect(callTimeoutMs(1_000)).toBe(1_000);
    });
  });

  it('aborts a JSON-RPC call to a listener that never answers when the budget runs out', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const rpc = createRpc(`http://127.0.0.1:${(silent.address() as { port: number }).port}`);
      const from = Date.now();
      const refused = await withinBudget(300, () => rpc.call('getblockcount')).catch((error: unknown) => error);
      expect(Date.now() - from).toBeLessThan(1_000);
      expect(refused).toBeInstanceOf(RpcUnavailableError);
      expect(isUnanswered(refused)).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("tells the node's silence from its answers", () => {
    expect(isUnanswered(new RpcUnavailableError('unreachable'))).toBe(true);
    expect(isUnanswered(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe(true);
    expect(isUnanswered(new TypeError('fetch failed'))).toBe(true);
    expect(isUnanswered(new TonApiError('TON API: HTTP 502', 502))).toBe(true);
    expect(isUnanswered(new TonApiError('TON API: rate limit', 429))).toBe(true);
    // viem wraps its transport's error.
    const viemLike = Object.assign(new Error('HTTP request failed'), { name: 'HttpRequestError' });
    expect(isUnanswered(new Error('Contract call failed', { cause: viemLike }))).toBe(true);
    // Answers: a node's refusal, a bad request, our own mistakes.
    expect(isUnanswered(new RpcError('getblockheader', -5, 'Block not found'))).toBe(false);
    expect(isUnanswered(new TonApiError('TON API: invalid address', 400))).toBe(false);
    expect(isUnanswered(new Error('not an amount in coins'))).toBe(false);
  });

  it('keeps the errors that are answers as they are, and a network that is off off', async () => {
    const refusal = new RpcError('sendrawtransaction', -26, 'min relay fee not met');
    const chain = routeChains({ LITECOIN: adapterAnswering(() => Promise.reject(refusal)) });
    await expect(chain.broadcast('LITECOIN', '00')).rejects.toBe(refusal);
    await expect(chain.broadcast('BITCOIN', '00')).rejects.toBeInstanceOf(ChainOffError);
    const unreachable = routeChains({ LITECOIN: adapterAnswering(() => Promise.reject(new RpcUnavailableError('the node at http://x is unreachable: connect ECONNREFUSED'))) });
    await expect(unreachable.status('LITECOIN', [])).rejects.toMatchObject({ name: 'ChainUnavailableError', network: 'LITECOIN', message: 'LITECOIN: the node at http://x is unreachable: connect ECONNREFUSED' });
  });

  it('is answered 503 NETWORK_UNAVAILABLE with the network in the body', async () => {
    const app = new Hono();
    app.onError((error, c) => errorResponse(error, c, createLogger('silent')));
    app.get('/', () => Promise.reject(new ChainUnavailableError('DOGECOIN', 'the node did not answer within 3500 ms')));
    const response = await app.request('/');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ exceptionCode: 'NETWORK_UNAVAILABLE', message: 'The DOGECOIN network is not answering right now; try again shortly', network: 'DOGECOIN' });
  });
});

describe('the router with a trace hook (tracing on)', () => {
  it('passes every node call through it by network and operation, with the router\'s own failure inside', async () => {
    const seen: { network: string; operation: string; outcome: string }[] = [];
    const refusal = new RpcUnavailableError('the node at http://x is unreachable: connect ECONNREFUSED');
    const chain = routeChains({ LITECOIN: adapterAnswering(() => Promise.reject(refusal)) }, async (network, operation, call) => {
      try {
        const result = await call();
        seen.push({ network, operation, outcome: 'ok' });
        return result;
      } catch (error) {
        seen.push({ network, operation, outcome: (error as Error).constructor.name });
        throw error;
      }
    });
    await expect(chain.scan('LITECOIN', null, 10)).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(chain.collection.sweep({ network: 'LITECOIN' } as Parameters<ChainAdapter['collection']['sweep']>[0])).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(chain.scan('BITCOIN', null, 10)).rejects.toBeInstanceOf(ChainOffError);
    expect(seen).toEqual([
      { network: 'LITECOIN', operation: 'scan', outcome: 'ChainUnavailableError' },
      { network: 'LITECOIN', operation: 'collection.sweep', outcome: 'ChainUnavailableError' },
      { network: 'BITCOIN', operation: 'scan', outcome: 'ChainOffError' },
    ]);
  });
});
