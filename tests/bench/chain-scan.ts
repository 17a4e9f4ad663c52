import { Address as TonAddress } from '@ton/core';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createPublicClient, custom, getAddress, pad, toHex, type Address, type PublicClient } from 'viem';
import type { EvmContext } from '../../src/server/adapters/chains/evm/context.ts';
import type { EvmKeys } from '../../src/server/adapters/chains/evm/keys.ts';
import { createEvmReader } from '../../src/server/adapters/chains/evm/reader.ts';
import { NEW_ADDRESSES_SQL } from '../../src/server/adapters/chains/address-set.ts';
import type { TonApi, V3Transaction } from '../../src/server/adapters/chains/ton/api.ts';
import { createDepositAddressSet, createTonScanner } from '../../src/server/adapters/chains/ton/reader.ts';
import type { UtxoProfile } from '../../src/server/adapters/chains/utxo/networks.ts';
import { unwindFrom } from '../../src/server/adapters/chains/utxo/outputs.ts';
import { blockSource } from '../../src/server/adapters/chains/utxo/reader.ts';
import type { Rpc } from '../../src/server/adapters/chains/utxo/rpc.ts';
import { openDatabase } from '../../src/server/db/database.ts';
import { createLogger } from '../../src/server/log.ts';
import { openAddressDatabase } from './scale-seed.ts';
import { median } from './stats.ts';

/**
 * The chain scans at mainnet size (issue 35 item 3), against the deposit addresses of SCAN_DATABASE_URL (bench:scale's
 * million-user database) or, without it, of a database of SCAN_ADDRESSES users (default 1,000,000) with their
 * accounts and addresses alone, seeded once under DATA_DIR/bench-scale (scale-seed.ts openAddressDatabase): each adapter's own reader on a generated block in its node's answer format — Bitcoin
 * Core's `getblock` verbosity 2 (3,000 transactions, 8,000 outputs, 5,000 inputs), an Ethereum block of 200
 * transactions with 300 token `Transfer` logs, a TON masterchain block's 1,000 transactions — each paying TO_US of the
 * custody's addresses. Time per block (median of BLOCKS) and this process's memory (RSS after a collection) with
 * every network's addresses loaded. Run with --expose-gc. Prints PASS/FAIL lines that bench:scale collects.
 */
const BLOCKS = 5;
const TO_US = 10;
const BLOCK_GOAL_MS = 1000;
const MEMORY_GOAL_MB = 200;
const own = process.env.SCAN_DATABASE_URL ? undefined : await openAddressDatabase(process.env.DATA_DIR ?? './data', Number(process.env.SCAN_ADDRESSES ?? 1_000_000));
const url = process.env.SCAN_DATABASE_URL ?? own?.url;
const pool = new pg.Pool({ connectionString: url, max: 4 });
// The server's migrations (the readers' indexes among them), as a server started on this database would apply them.
await (await openDatabase({ databaseUrl: url, dataDir: '/tmp/unused' }, createLogger('warn'))).close();
const hex = (seed: string, bytes = 32) => createHash('sha256').update(seed).digest('hex').slice(0, bytes * 2);
const ours = async (network: string) =>
  (await pool.query<{ address: string }>(`SELECT address FROM deposit_addresses WHERE network = $1 ORDER BY address LIMIT ${TO_US}`, [network])).rows.map((r) => r.address);
const addressCount = async (network: string) => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM deposit_addresses WHERE network = $1', [network])).rows[0]?.n);
/** What the process holds after a full collection (heap and Buffers), and its resident size (which keeps freed pages). */
const memoryMb = () => {
  globalThis.gc?.();
  const { heapUsed, external, rss } = process.memoryUsage();
  return { live: (heapUsed + external) / 2 ** 20, rss: rss / 2 ** 20 };
};
const checks: [string, boolean][] = [];
const timeBlocks = async (read: (i: number) => Promise<number>, expected: number, name: string, addresses: number) => {
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < BLOCKS; i++) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const found = await read(i);
    ms.push(performance.now() - t0);
    const used = process.cpuUsage(cpu0);
    cpu.push((used.user + used.system) / 1000);
    if (found !== expected) throw new Error(`${name}: block ${i} gave ${found} deposits, not ${expected}`);
  }
  checks.push([`${name} against ${addresses} addresses: ${median(ms).toFixed(0)} ms per block (median of ${BLOCKS}; worst ${Math.max(...ms).toFixed(0)}; this process's CPU ${median(cpu).toFixed(0)} ms; goal ≤ ${BLOCK_GOAL_MS} ms)`, median(ms) <= BLOCK_GOAL_MS]);
};
const baseline = memoryMb();

try {
  // Bitcoin: the UTXO adapter's block reader (address lookup in PostgreSQL, the output index written), at a height of its own.
  {
    const mine = await ours('BITCOIN');
    const HEIGHT = 900_000_000;
    const blockOf = (height: number) => {
      const tx = [];
      let outputs = 0;
      for (let t = 0; t < 3000; t++) {
        const count = t < 2000 ? 3 : 2;
        const vout = Array.from({ length: count }, (_, n) => {
          const k = outputs++;
          const address = k % 800 === 0 && k / 800 < TO_US ? (mine[k / 800] ?? '') : `bc1q${hex(`o${height}:${k}`, 19)}`;
          return { value: `0.${String(10_000 + (k % 90_000)).padStart(8, '0')}`, n, scriptPubKey: { address } };
        });
        const vin = t === 0 ? [{ coinbase: '03' }] : Array.from({ length: t < 2000 ? 2 : 1 }, (_, n) => ({ txid: hex(`in${height}:${t}:${n}`), vout: n }));
        tx.push({ txid: hex(`tx${height}:${t}`), vin, vout });
      }
      return { hash: hex(`block${height}`), height, tx };
    };
    const rpc: Rpc = {
      call: async <T>(method: string, ...params: unknown[]): Promise<T> => {
        if (method === 'getblockhash') return hex(`block${String(params[0])}`) as T;
        if (method === 'getblock') return blockOf(heightOf.get(String(params[0])) ?? -1) as T;
        throw new Error(`unexpected ${method}`);
      },
      batch: async () => [],
    };
    const heightOf = new Map(Array.from({ length: BLOCKS }, (_, i) => [hex(`block${HEIGHT + i}`), HEIGHT + i]));
    const source = blockSource(pool, rpc, 'BITCOIN', { coin: 'BTC', booleanGetblock: false } as UtxoProfile, new Map());
    const sample = blockOf(HEIGHT);
    const outputs = sample.tx.reduce((n, t) => n + t.vout.length, 0);
    try {
      await timeBlocks(async (i) => (await source.blockAt(HEIGHT + i)).transfers.length, TO_US, `Bitcoin block (${sample.tx.length} transactions, ${outputs} outputs), UTXO reader`, await addressCount('BITCOIN'));
    } finally {
      await unwindFrom(pool, 'BITCOIN', HEIGHT);
    }
  }

  // The query each EVM and TON scan makes for the addresses added since the last (address-set.ts), against the shape it
  // had before the (network, created_at) index: a walk of the network's rows in key order, filtered by time.
  {
    const since = (await pool.query<{ at: Date }>(`SELECT max(created_at) AS at FROM deposit_addresses WHERE network = 'ETHEREUM'`)).rows[0]?.at ?? new Date();
    const walk = `SELECT address, created_at FROM deposit_addresses WHERE network = $1 AND address > $2 AND created_at >= $3::timestamptz - interval '10 minutes'
                   ORDER BY address LIMIT 50000`;
    const explain = async (sql: string, noIndex: boolean) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // The walk as it ran before the index existed: the index is dropped inside a transaction rolled back after.
        if (noIndex) await client.query('DROP INDEX IF EXISTS deposit_addresses_network_created_at');
        const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, ['ETHEREUM', '', since])).rows.map((r) => r['QUERY PLAN']);
        return { ms: Number(/Execution Time: ([\d.]+)/.exec(plan.join('\n'))?.[1]), scan: plan.find((l) => /Scan/.test(l))?.trim() ?? '', buffers: /shared hit=(\d+)(?: read=(\d+))?/.exec(plan.join('\n')) };
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    };
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push({ lookup: await explain(NEW_ADDRESSES_SQL, false), walk: await explain(walk, true) });
    const lookup = median(runs.map((r) => r.lookup.ms));
    const walked = median(runs.map((r) => r.walk.ms));
    const pages = (b: RegExpExecArray | null) => Number(b?.[1] ?? 0) + Number(b?.[2] ?? 0);
    console.log(`note  the scans' "added since" query (EXPLAIN ANALYZE, median of 3): ${lookup.toFixed(2)} ms, ${pages(runs[0]?.lookup.buffers ?? null)} pages (${runs[0]?.lookup.scan}); without the index ${walked.toFixed(0)} ms, ${pages(runs[0]?.walk.buffers ?? null)} pages (${runs[0]?.walk.scan})`);
    checks.push([`the scans' "added since" query uses deposit_addresses_network_created_at: ${lookup.toFixed(2)} ms against ${walked.toFixed(0)} ms without it (goal ≤ 10 ms)`, /deposit_addresses_network_created_at/.test(runs[0]?.lookup.scan ?? '') && lookup <= 10]);
  }

  // Ethereum: the EVM reader on a block of 200 transactions and 300 USDT Transfer logs, answered by a stub node.
  {
    const mine = (await ours('ETHEREUM')).map((a) => getAddress(a));
    const usdt: Address = '0xdac17f958d2ee523a2206206994597c13d831ec7';
    const TIP = 20_000_000;
    const blockHash = (n: number) => `0x${hex(`eth${n}`)}` as const;
    const txHash = (n: number, t: number) => `0x${hex(`ethtx${n}:${t}`)}` as const;
    const topicOf = (address: string) => pad(address as Address, { size: 32 });
    const transferTopic = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
    const logsOf = (n: number) =>
      Array.from({ length: 300 }, (_, k) => ({
        address: usdt,
        topics: [transferTopic, topicOf(`0x${hex(`from${n}:${k}`, 20)}`), topicOf(k < TO_US ? (mine[k] ?? '') : `0x${hex(`to${n}:${k}`, 20)}`)],
        data: pad(toHex(1_000_000 + k), { size: 32 }),
        blockNumber: toHex(n),
        blockHash: blockHash(n),
        transactionHash: txHash(n, k % 200),
        transactionIndex: toHex(k % 200),
        logIndex: toHex(k),
        removed: false,
      }));
    const block = (n: number, full: boolean) => ({
      number: toHex(n),
      hash: blockHash(n),
      parentHash: blockHash(n - 1),
      timestamp: toHex(1_700_000_000 + n * 12),
      gasLimit: '0x1c9c380',
      gasUsed: '0x0',
      baseFeePerGas: '0x1',
      transactions: Array.from({ length: 200 }, (_, t) =>
        full ? { hash: txHash(n, t), from: `0x${hex(`sender${t}`, 20)}`, to: usdt, value: '0x0', blockHash: blockHash(n), blockNumber: toHex(n), transactionIndex: toHex(t), nonce: '0x1', gas: '0x10000', gasPrice: '0x1', input: '0x', type: '0x0' } : txHash(n, t),
      ),
    });
    const request = async ({ method, params }: { method: string; params?: unknown }) => {
      const args = (params ?? []) as unknown[];
      if (method === 'eth_blockNumber') return toHex(current);
      if (method === 'eth_getBlockByNumber') return block(Number(args[0]), Boolean(args[1]));
      if (method === 'eth_getLogs') {
        const filter = args[0] as { fromBlock?: string; toBlock?: string; topics?: (string | string[] | null)[] };
        const recipients = filter.topics?.[2];
        const wanted = Array.isArray(recipients) ? new Set(recipients.map((t) => t.toLowerCase())) : undefined;
        const logs = [];
        for (let n = Number(filter.fromBlock); n <= Number(filter.toBlock); n++) logs.push(...logsOf(n));
        rpcCalls.getLogs++;
        return wanted ? logs.filter((l) => wanted.has((l.topics[2] ?? '').toLowerCase())) : logs;
      }
      if (method === 'eth_getTransactionReceipt') {
        const [hash] = args as string[];
        const n = current;
        const t = Array.from({ length: 200 }, (_, i) => i).find((i) => txHash(n, i) === hash) ?? 0;
        return {
          transactionHash: hash, blockHash: blockHash(n), blockNumber: toHex(n), transactionIndex: toHex(t), from: `0x${hex(`sender${t}`, 20)}`, to: usdt, status: '0x1',
          gasUsed: '0x1', effectiveGasPrice: '0x1', cumulativeGasUsed: '0x1', contractAddress: null, logsBloom: `0x${'0'.repeat(512)}`, type: '0x0',
          logs: logsOf(n).filter((l) => l.transactionHash === hash),
        };
      }
      throw new Error(`unexpected ${method}`);
    };
    let current = TIP;
    const rpcCalls = { getLogs: 0 };
    const client = createPublicClient({ cacheTime: 0, transport: custom({ request }) }) as PublicClient;
    const hot = `0x${hex('hot', 20)}` as Address;
    const context: EvmContext = {
      pool, client, chainId: async () => 1, keys: { hotAddress: () => getAddress(hot) } as unknown as EvmKeys,
      tokenCurrency: new Map([[usdt, 'USDT_ETH']]), tokenContract: new Map([['USDT_ETH', usdt]]), confirmations: 12,
    };
    const reader = createEvmReader(context);
    await timeBlocks(
      async (i) => {
        current = TIP + i;
        rpcCalls.getLogs = 0;
        const batch = await reader.scan('ETHEREUM', `${current - 1}:${blockHash(current - 1)}`, 1);
        return batch.transfers.length;
      },
      TO_US,
      'Ethereum block (200 transactions, 300 token Transfer logs), EVM reader',
      await addressCount('ETHEREUM'),
    );
    checks.push([`Ethereum: eth_getLogs calls per block ${rpcCalls.getLogs} (goal ≤ 2)`, rpcCalls.getLogs <= 2]);
  }

  // TON: the masterchain block's transactions matched against the in-memory address set.
  {
    const mine = await ours('TON');
    const set = createDepositAddressSet(pool);
    const t0 = performance.now();
    await set.refresh();
    const loadMs = performance.now() - t0;
    const TIP = 50_000_000;
    let current = TIP;
    // The seeded addresses' bytes (their checksum is not made: the reader does not check stored addresses'); @ton/core's raw form.
    const rawOf = (friendly: string) => `0:${Buffer.from(friendly, 'base64').subarray(2, 34).toString('hex')}`;
    const transactions = (seqno: number): V3Transaction[] =>
      Array.from({ length: 1000 }, (_, k) => ({
        account: k < TO_US ? rawOf(mine[k] ?? '') : `0:${hex(`tonacct${seqno}:${k}`).toUpperCase()}`,
        hash: Buffer.from(hex(`tontx${seqno}:${k}`), 'hex').toString('base64'),
        lt: String(seqno * 1000 + k),
        now: 1_700_000_000,
        mc_block_seqno: seqno,
        total_fees: '1000',
        description: { type: 'ord', aborted: false, credit_ph: { credit: '1000000000' }, compute_ph: { skipped: true }, action: null },
        in_msg: { hash: 'x', source: `0:${hex(`src${k}`).toUpperCase()}`, destination: null, value: '1000000000', fwd_fee: '0', ihr_fee: '0', bounce: false, bounced: false },
        out_msgs: [],
      }));
    const api = {
      tip: async () => ({ seqno: current, hash: hex(`mc${current}`), utime: 0 }),
      masterchainBlockHash: async (seqno: number) => hex(`mc${seqno}`),
      transactionsOfMasterchainBlock: async (seqno: number) => transactions(seqno),
    } as unknown as TonApi;
    const scan = createTonScanner(api, set, (raw) => TonAddress.parse(raw).toString({ bounceable: false, urlSafe: true }));
    await timeBlocks(
      async (i) => {
        current = TIP + i;
        return (await scan(`${current - 1}:${hex(`mc${current - 1}`)}`, 1)).transfers.length;
      },
      TO_US,
      `TON masterchain block (1,000 transactions), TON reader (address set loaded in ${loadMs.toFixed(0)} ms)`,
      set.size,
    );
  }
  const memory = memoryMb();
  checks.push([
    `memory with every network's addresses loaded: ${memory.live.toFixed(0)} MB held (heap and Buffers after a collection; ${baseline.live.toFixed(0)} MB before loading; RSS ${memory.rss.toFixed(0)} MB, ${baseline.rss.toFixed(0)} MB before; goal ≤ ${MEMORY_GOAL_MB} MB held)`,
    memory.live <= MEMORY_GOAL_MB,
  ]);
} finally {
  await pool.end();
  await own?.stop();
}
for (const [text, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
process.exit(checks.some(([, ok]) => !ok) ? 1 : 0);
