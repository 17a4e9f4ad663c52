/**
 * The node: a viem public client over ETHEREUM_RPC_URL (http or ws), and the chain id it serves checked once against
 * CHAIN_ENV before anything is read or signed.
 */
import { createPublicClient, http, webSocket, type PublicClient } from 'viem';
import type { ChainEnv } from '../port.ts';
import { callTimeoutMs } from '../../../net/call-budget.ts';

/** Each HTTP call's timeout outside a request (a request's budget is shorter: net/call-budget.ts). */
const HTTP_TIMEOUT_MS = 20_000;

/** fetch bounded by what is left of the request's budget, besides viem's own timeout. */
const budgetedFetch =
  (ownMs: number): typeof fetch =>
  (input, init) => {
    const budget = AbortSignal.timeout(callTimeoutMs(ownMs));
    return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, budget]) : budget });
  };

/** Public test networks (Sepolia, Holesky, Hoodi): CHAIN_ENV=testnet. */
export const TESTNET_CHAIN_IDS: ReadonlySet<number> = new Set([11155111, 17000, 560048]);
export const MAINNET_CHAIN_ID = 1;

export class ChainIdMismatchError extends Error {}

/** `timeoutMs`: each HTTP call's own timeout (CHAIN_CALL_TIMEOUT_MS; default 20 s). */
export function openClient(rpcUrl: string, timeoutMs = HTTP_TIMEOUT_MS): PublicClient {
  const transport = /^wss?:/.test(rpcUrl) ? webSocket(rpcUrl, { retryCount: 3 }) : http(rpcUrl, { retryCount: 2, timeout: timeoutMs, fetchFn: budgetedFetch(timeoutMs) });
  // No cache: the block number must be the node's now (viem keeps it for 4 s by default).
  return createPublicClient({ transport, cacheTime: 0 });
}

/** Throws a ChainIdMismatchError unless `chainId` belongs to CHAIN_ENV: 1 on mainnet, a public testnet's on testnet, any other on regtest. */
export function checkChainId(chainId: number, env: ChainEnv): void {
  const kind = chainId === MAINNET_CHAIN_ID ? 'mainnet' : TESTNET_CHAIN_IDS.has(chainId) ? 'testnet' : 'regtest';
  if (kind === env) return;
  throw new ChainIdMismatchError(
    `ETHEREUM_RPC_URL serves chain id ${chainId} (${kind === 'regtest' ? 'a local or private chain' : kind}) but CHAIN_ENV is ${env}: ` +
      `point ETHEREUM_RPC_URL at a ${env} node (mainnet: chain id 1; testnet: Sepolia 11155111, Holesky 17000 or Hoodi 560048; regtest: any other, e.g. anvil's 31337) or set CHAIN_ENV=${kind}`,
  );
}

/** The chain id, asked once and checked; every adapter call awaits it first. */
export function chainIdGuard(client: PublicClient, env: ChainEnv): () => Promise<number> {
  let checked: Promise<number> | undefined;
  return () => {
    checked ??= client.getChainId().then((id) => {
      checkChainId(id, env);
      return id;
    });
    // A node that was down is asked again next time; a mismatch stays an error.
    checked.catch((error: unknown) => {
      if (!(error instanceof ChainIdMismatchError)) checked = undefined;
    });
    return checked;
  };
}
