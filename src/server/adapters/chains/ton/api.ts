/**
 * A client of a toncenter-compatible HTTP API: v3 (the indexer) for reading, v2 for sending. `TON_API_KEY` travels
 * as the X-API-Key header. Hashes go out in hex (v3 takes hex, base64 or base64url) and come back in base64: `hexHash`
 * turns them into the hex the custody stores. Addresses come back raw (`0:ABC…`).
 */
import { callTimeoutMs } from '../../../net/call-budget.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** A message as v3 shows it inside a transaction. */
export type V3Message = {
  hash: string;
  source: string | null;
  destination: string | null;
  value: string | null;
  fwd_fee: string | null;
  ihr_fee: string | null;
  bounce: boolean | null;
  bounced: boolean | null;
};

/** The parts of a v3 transaction's description the custody reads. */
export type V3Description = {
  type: string;
  aborted?: boolean;
  credit_ph?: { credit?: string } | null;
  compute_ph?: { skipped?: boolean; success?: boolean; exit_code?: number; reason?: string } | null;
  action?: { success?: boolean; result_code?: number } | null;
  bounce?: unknown;
};

export type V3Transaction = {
  account: string;
  hash: string;
  lt: string;
  now: number;
  mc_block_seqno: number;
  total_fees: string;
  description: V3Description;
  in_msg: V3Message | null;
  out_msgs: V3Message[];
};

export type V3Block = { workchain: number; shard: string; seqno: number; root_hash: string; gen_utime: string | number };

/** An account's state: `uninit` and `nonexist` have no code (a bounceable message to them bounces). */
export type AccountStatus = 'active' | 'uninit' | 'frozen' | 'nonexist';

export type WalletInformation = { balance: bigint; seqno: number; status: AccountStatus };

/** The toncenter error a refused request answers with, and its HTTP status. */
export class TonApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

const MASTERCHAIN_SHARD = '8000000000000000';
/** v3's largest page of transactions. */
const PAGE = 256;

export type TonApi = ReturnType<typeof createTonApi>;

export function createTonApi(options: { apiUrl: string; apiKey?: string | undefined; timeoutMs?: number }) {
  const base = options.apiUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  const timeoutMs = options.timeoutMs ?? 15_000;

  async function request<T>(path: string, init?: { method: 'POST'; body: unknown }): Promise<T> {
    const response = await fetch(`${base}${path}`, {
      method: init?.method ?? 'GET',
      headers: init ? { ...headers, 'content-type': 'application/json' } : headers,
      body: init ? JSON.stringify(init.body) : undefined,
      signal: AbortSignal.timeout(callTimeoutMs(timeoutMs)),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new TonApiError(`TON API ${path.split('?')[0]}: HTTP ${response.status}, not JSON`, response.status);
    }
    if (!response.ok || (typeof body === 'object' && body !== null && 'ok' in body && body.ok === false)) {
      const error = typeof body === 'object' && body !== null && 'error' in body ? String(body.error) : `HTTP ${response.status}`;
      throw new TonApiError(`TON API ${path.split('?')[0]}: ${error}`, response.status);
    }
    return body as T;
  }
  const query = (params: Record<string, string | number | readonly string[]>) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (Array.isArray(value)) for (const item of value as readonly string[]) search.append(key, item);
      else search.append(key, String(value));
    }
    return search.toString();
  };

  return {
    /** The newest masterchain block the indexer has: the chain's height and time for the custody. */
    async tip(): Promise<{ seqno: number; hash: string; utime: number }> {
      const info = await request<{ last: V3Block }>('/api/v3/masterchainInfo');
      return { seqno: info.last.seqno, hash: hexHash(info.last.root_hash), utime: Number(info.last.gen_utime) };
    },
    /** The masterchain block `seqno`'s root hash (hex), undefined when the indexer has none. */
    async masterchainBlockHash(seqno: number): Promise<string | undefined> {
      const found = await request<{ blocks: V3Block[] }>(`/api/v3/blocks?${query({ workchain: -1, shard: MASTERCHAIN_SHARD, seqno, limit: 1 })}`);
      const block = found.blocks[0];
      return block ? hexHash(block.root_hash) : undefined;
    },
    /** Every transaction of the shard blocks a masterchain block committed (and its own), page by page. */
    async transactionsOfMasterchainBlock(seqno: number): Promise<V3Transaction[]> {
      const all: V3Transaction[] = [];
      for (let offset = 0; ; offset += PAGE) {
        const page = await request<{ transactions: V3Transaction[] }>(`/api/v3/transactions?${query({ mc_seqno: seqno, limit: PAGE, offset, sort: 'asc' })}`);
        all.push(...page.transactions);
        if (page.transactions.length < PAGE) return all;
      }
    },
    async transactionByHash(hashHex: string): Promise<V3Transaction | undefined> {
      return (await request<{ transactions: V3Transaction[] }>(`/api/v3/transactions?${query({ hash: hashHex, limit: 1 })}`)).transactions[0];
    },
    /** The transaction an (external or internal) incoming message started, by the message's hash. */
    async transactionByInMessage(messageHashHex: string): Promise<V3Transaction | undefined> {
      return (await request<{ transactions: V3Transaction[] }>(`/api/v3/transactionsByMessage?${query({ msg_hash: messageHashHex, direction: 'in', limit: 1 })}`)).transactions[0];
    },
    async walletInformation(address: string): Promise<WalletInformation> {
      const info = await orNotFound(request<{ balance: string; seqno?: number | null; status: AccountStatus }>(`/api/v3/walletInformation?${query({ address, use_v2: 'false' })}`));
      return info ? { balance: BigInt(info.balance), seqno: info.seqno ?? 0, status: info.status } : { balance: 0n, seqno: 0, status: 'nonexist' };
    },
    async accountStatus(address: string): Promise<AccountStatus> {
      return (await orNotFound(request<{ status: AccountStatus }>(`/api/v3/addressInformation?${query({ address, use_v2: 'false' })}`)))?.status ?? 'nonexist';
    },
    /** Balances of many accounts, 100 per request; accounts the chain never saw are absent (nothing there). */
    async balances(addresses: readonly string[]): Promise<Units<'TON'>[]> {
      const out: Units<'TON'>[] = [];
      for (let i = 0; i < addresses.length; i += 100) {
        const found = await request<{ accounts: { address: string; balance: string | null }[] }>(`/api/v3/accountStates?${query({ address: addresses.slice(i, i + 100), include_boc: 'false' })}`);
        for (const account of found.accounts) out.push(unitsOf(BigInt(account.balance ?? '0')));
      }
      return out;
    },
    /** v2 sendBoc: the indexer-independent way a signed external message reaches the validators. */
    async sendBoc(bocBase64: string): Promise<void> {
      await request('/api/v2/sendBoc', { method: 'POST', body: { boc: bocBase64 } });
    },
  };
}

/** An account the indexer never saw may answer 404 rather than an empty account: both mean nothing is there. */
async function orNotFound<T>(answer: Promise<T>): Promise<T | undefined> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof TonApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** A hash in hex, from v3's base64 (or already hex). */
export function hexHash(hash: string): string {
  if (/^[0-9a-fA-F]{64}$/.test(hash)) return hash.toLowerCase();
  return Buffer.from(hash.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex');
}
