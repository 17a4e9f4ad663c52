/**
 * A Bitcoin Core–style JSON-RPC client (Bitcoin Core, Litecoin Core, Dogecoin Core): fetch, basic auth from the
 * URL's user and password, batches. Amounts come back as the node writes them (decimal strings, never floats).
 */
import { callTimeoutMs } from '../../../net/call-budget.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** Each call's timeout outside a request (a request's budget is shorter: net/call-budget.ts). */
export const RPC_TIMEOUT_MS = 30_000;

/** The node answered with an error (`code` is Bitcoin Core's RPC error code, e.g. -5 no such transaction). */
export class RpcError extends Error {
  readonly method: string;
  readonly code: number;
  constructor(method: string, code: number, message: string) {
    super(`${method}: ${message} (code ${code})`);
    this.method = method;
    this.code = code;
  }
}

/** The node could not be reached or answered something that is not JSON-RPC. */
export class RpcUnavailableError extends Error {}

export type RpcCall = { method: string; params?: unknown[] };

export type Rpc = {
  call<T>(method: string, ...params: unknown[]): Promise<T>;
  /** Several calls in one request; each answer is its value or its RpcError, in order. */
  batch<T>(calls: readonly RpcCall[]): Promise<(T | RpcError)[]>;
};

/** Keys whose numbers are amounts or fee rates in coins: kept as their exact decimal text. */
const AMOUNT_KEYS = new Set(['value', 'feerate', 'relayfee', 'incrementalfee', 'mempoolminfee', 'minrelaytxfee', 'fee', 'amount', 'base', 'modified']);

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const keepAmounts: Reviver = (key, value, context) => (typeof value === 'number' && AMOUNT_KEYS.has(key) && context?.source !== undefined ? context.source : value);

type Answer = { result?: unknown; error?: { code: number; message: string } | null; id?: unknown };

export function createRpc(url: string, options: { timeoutMs?: number } = {}): Rpc {
  const parsed = new URL(url);
  const auth = parsed.username ? `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}` : undefined;
  parsed.username = '';
  parsed.password = '';
  const endpoint = parsed.toString();
  // The URL without its password, for messages.
  const shown = `${parsed.protocol}//${parsed.host}`;
  let nextId = 1;

  const post = async (body: unknown): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(callTimeoutMs(options.timeoutMs ?? RPC_TIMEOUT_MS)),
      });
    } catch (error) {
      throw new RpcUnavailableError(`the node at ${shown} is unreachable: ${(error as Error).message}`, { cause: error });
    }
    if (response.status === 401 || response.status === 403) throw new RpcUnavailableError(`the node at ${shown} refused the RPC user and password (HTTP ${response.status})`);
    const text = await response.text();
    try {
      return (JSON.parse as (text: string, reviver: Reviver) => unknown)(text, keepAmounts);
    } catch {
      throw new RpcUnavailableError(`the node at ${shown} answered HTTP ${response.status} without JSON: ${text.slice(0, 200)}`);
    }
  };

  const unwrap = (method: string, answer: Answer | undefined): unknown => {
    if (!answer || typeof answer !== 'object') throw new RpcUnavailableError(`the node at ${shown} gave no answer to ${method}`);
    if (answer.error) return new RpcError(method, answer.error.code, answer.error.message);
    return answer.result;
  };

  return {
    async call<T>(method: string, ...params: unknown[]): Promise<T> {
      const value = unwrap(method, (await post({ jsonrpc: '1.0', id: nextId++, method, params })) as Answer);
      if (value instanceof RpcError) throw value;
      return value as T;
    },
    async batch<T>(calls: readonly RpcCall[]): Promise<(T | RpcError)[]> {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const answers = await post(calls.map((c, i) => ({ jsonrpc: '1.0', id: first + i, method: c.method, params: c.params ?? [] })));
      if (!Array.isArray(answers)) throw new RpcUnavailableError(`the node at ${shown} did not answer a batch with a list`);
      const byId = new Map((answers as Answer[]).map((a) => [a.id, a]));
      return calls.map((c, i) => unwrap(c.method, byId.get(first + i)) as T | RpcError);
    },
  };
}

/** Coins as the node writes them ("0.00012345") to atomic units (8 decimals on all three networks). */
export function coinsToUnits(text: string | number): Units {
  const value = String(text);
  const match = /^(-?)(\d+)(?:\.(\d{1,8}))?$/.exec(value);
  if (!match) throw new Error(`not an amount in coins: ${value}`);
  const units = BigInt(match[2] ?? '0') * 100_000_000n + BigInt((match[3] ?? '').padEnd(8, '0'));
  return unitsOf(match[1] ? -units : units);
}
