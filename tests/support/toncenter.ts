/**
 * A stand-in for toncenter over the TON emulator (@ton/sandbox): real wallet contracts executed by the TVM, their
 * REAL transactions served in the toncenter API's shape (v3 reading, v2 sendBoc forwarding into the emulator), on a
 * free port. The emulator has no blocks: each message sent (and everything it caused) is put in one masterchain
 * block of its own, numbered from 1. What is not the real toncenter: block hashes (sha256 of the block's
 * transaction hashes), the one-block-per-send shape, and only the endpoints and fields the TON adapter reads.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Address, beginCell, Cell, loadMessage, storeMessage, type Message, type Transaction } from '@ton/core';
import { Blockchain, type SendMessageResult } from '@ton/sandbox';
import type { V3Message, V3Transaction } from '../../src/server/adapters/chains/ton/api.ts';

type Block = { seqno: number; rootHash: string; utime: number; transactions: V3Transaction[] };

export type TonStandIn = {
  url: string;
  blockchain: Blockchain;
  /** Puts what a send did into a new masterchain block; returns its seqno. */
  mine(result: SendMessageResult): number;
  /** A block with nothing in it (time passes on the chain). */
  emptyBlock(): number;
  /** Moves the emulator's clock (and the next blocks' time) forward. */
  advance(seconds: number): void;
  /** A treasury (a funded, deployed wallet of the emulator) sends `value` to `to`; mined in its own block. */
  fund(to: string, value: bigint, bounce?: boolean): Promise<number>;
  balance(address: string): Promise<bigint>;
  /** Every sendBoc the stand-in received, and whether the emulator accepted it. */
  sent: { boc: string; accepted: boolean }[];
  close(): Promise<void>;
};

export async function startTonStandIn(options: { apiKey?: string } = {}): Promise<TonStandIn> {
  const blockchain = await Blockchain.create();
  blockchain.now = Math.floor(Date.now() / 1000);
  const blocks: Block[] = [];
  const sent: TonStandIn['sent'] = [];

  const addBlock = (transactions: V3Transaction[]): number => {
    const seqno = blocks.length + 1;
    const rootHash = createHash('sha256').update(`${seqno}:${transactions.map((t) => t.hash).join(',')}`).digest('base64');
    for (const tx of transactions) tx.mc_block_seqno = seqno;
    blocks.push({ seqno, rootHash, utime: blockchain.now ?? 0, transactions });
    return seqno;
  };
  addBlock([]);
  const mine = (result: SendMessageResult) => addBlock(result.transactions.map((tx) => toV3(tx)));

  const treasury = await blockchain.treasury('toncenter-stand-in');
  const accountOf = async (address: string) => {
    const contract = await blockchain.getContract(Address.parse(address));
    const state = contract.accountState;
    const status = !state ? 'nonexist' : state.type === 'active' ? 'active' : state.type === 'frozen' ? 'frozen' : 'uninit';
    // An account the emulator never touched reads as an empty one.
    const exists = status !== 'uninit' || contract.balance > 0n || contract.lastTransactionLt > 0n;
    return { contract, status: exists ? status : 'nonexist', balance: contract.balance };
  };

  const routes: Record<string, (query: URLSearchParams, body: unknown) => Promise<unknown>> = {
    'GET /api/v3/masterchainInfo': async () => ({ first: v3Block(blocks[0]), last: v3Block(blocks.at(-1)) }),
    'GET /api/v3/blocks': async (q) => {
      if (q.get('workchain') !== '-1') return { blocks: [] };
      const block = blocks[Number(q.get('seqno')) - 1];
      return { blocks: block ? [v3Block(block)] : [] };
    },
    'GET /api/v3/transactions': async (q) => {
      const hash = q.get('hash');
      if (hash) return { transactions: allTransactions().filter((t) => sameHash(t.hash, hash)).slice(0, 1) };
      const block = blocks[Number(q.get('mc_seqno')) - 1];
      const offset = Number(q.get('offset') ?? 0);
      return { transactions: (block?.transactions ?? []).slice(offset, offset + Number(q.get('limit') ?? 128)) };
    },
    'GET /api/v3/transactionsByMessage': async (q) => {
      const hash = q.get('msg_hash') ?? '';
      return { transactions: allTransactions().filter((t) => t.in_msg && sameHash(t.in_msg.hash, hash)).slice(0, 1) };
    },
    'GET /api/v3/walletInformation': async (q) => {
      const { contract, status, balance } = await accountOf(q.get('address') ?? '');
      const seqno = status === 'active' ? Number((await contract.get('seqno')).stackReader.readBigNumber()) : null;
      return { balance: balance.toString(), seqno, status, last_transaction_lt: contract.lastTransactionLt.toString() };
    },
    'GET /api/v3/addressInformation': async (q) => {
      const { status, balance } = await accountOf(q.get('address') ?? '');
      // An account the chain never saw: answered as not found here (the client takes that and an empty account alike).
      if (status === 'nonexist') throw new HttpError(404, 'account not found');
      return { balance: balance.toString(), status };
    },
    'GET /api/v3/accountStates': async (q) => ({
      accounts: await Promise.all(
        q.getAll('address').map(async (address) => {
          const { status, balance } = await accountOf(address);
          return { address: Address.parse(address).toRawString().toUpperCase(), balance: balance.toString(), status };
        }),
      ),
    }),
    'POST /api/v2/sendBoc': async (_q, body) => {
      const boc = (body as { boc?: string }).boc ?? '';
      let message: Message;
      try {
        message = loadMessage(Cell.fromBase64(boc).beginParse());
      } catch {
        throw new HttpError(400, 'invalid boc');
      }
      try {
        mine(await blockchain.sendMessage(message));
        sent.push({ boc, accepted: true });
      } catch {
        sent.push({ boc, accepted: false });
        // What toncenter answers when the wallet contract does not accept the message (bad seqno, expired, signature).
        throw new HttpError(500, 'LITE_SERVER_UNKNOWN: cannot apply external message to current state : External message was not accepted');
      }
      return { ok: true, result: { '@type': 'ok' } };
    },
  };

  const allTransactions = () => blocks.flatMap((b) => b.transactions);

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const route = routes[`${req.method} ${url.pathname}`];
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (options.apiKey && req.headers['x-api-key'] !== options.apiKey) return reply(401, { ok: false, error: 'API key required', code: 401 });
      if (!route) return reply(404, { error: `no route ${req.method} ${url.pathname}` });
      try {
        reply(200, await route(url.searchParams, req.method === 'POST' ? JSON.parse(await readBody(req)) : undefined));
      } catch (error) {
        const status = error instanceof HttpError ? error.status : 500;
        reply(status, { ok: false, error: error instanceof Error ? error.message : String(error), code: status });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    blockchain,
    mine,
    emptyBlock: () => addBlock([]),
    advance(seconds) {
      blockchain.now = (blockchain.now ?? 0) + seconds;
    },
    async fund(to, value, bounce = false) {
      return mine(await treasury.send({ to: Address.parse(to), value, bounce }));
    },
    balance: async (address) => (await accountOf(address)).balance,
    sent,
    close: () => (server.listening ? new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))) : Promise.resolve()),
  };
}

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function v3Block(block: Block | undefined) {
  if (!block) throw new Error('no block');
  return { workchain: -1, shard: '8000000000000000', seqno: block.seqno, root_hash: block.rootHash, gen_utime: String(block.utime) };
}

function sameHash(base64: string, asked: string): boolean {
  const hex = /^[0-9a-fA-F]{64}$/.test(asked) ? asked.toLowerCase() : Buffer.from(asked.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex');
  return Buffer.from(base64, 'base64').toString('hex') === hex;
}

const raw = (address: Address) => address.toRawString().toUpperCase();

function v3Message(message: Message): V3Message {
  const hash = beginCell().store(storeMessage(message)).endCell().hash().toString('base64');
  const info = message.info;
  if (info.type === 'internal') {
    return { hash, source: raw(info.src), destination: raw(info.dest), value: info.value.coins.toString(), fwd_fee: info.forwardFee.toString(), ihr_fee: info.ihrFee.toString(), bounce: info.bounce, bounced: info.bounced };
  }
  if (info.type === 'external-in') return { hash, source: null, destination: raw(info.dest), value: null, fwd_fee: null, ihr_fee: null, bounce: null, bounced: null };
  return { hash, source: raw(info.src), destination: null, value: null, fwd_fee: null, ihr_fee: null, bounce: null, bounced: null };
}

/** An emulator transaction as toncenter v3 shows it (the fields the adapter reads). */
function toV3(tx: Transaction): V3Transaction {
  const d = tx.description;
  if (d.type !== 'generic') throw new Error(`the stand-in serves ordinary transactions only, not ${d.type}`);
  const inMessage = tx.inMessage;
  const account = inMessage && inMessage.info.type !== 'external-out' ? raw(inMessage.info.dest) : `0:${tx.address.toString(16).padStart(64, '0').toUpperCase()}`;
  const compute = d.computePhase;
  return {
    account,
    hash: tx.hash().toString('base64'),
    lt: tx.lt.toString(),
    now: tx.now,
    mc_block_seqno: 0,
    total_fees: tx.totalFees.coins.toString(),
    description: {
      type: 'ord',
      aborted: d.aborted,
      credit_ph: d.creditPhase ? { credit: d.creditPhase.credit.coins.toString() } : null,
      compute_ph: compute.type === 'skipped' ? { skipped: true, reason: compute.reason } : { skipped: false, success: compute.success, exit_code: compute.exitCode },
      action: d.actionPhase ? { success: d.actionPhase.success, result_code: d.actionPhase.resultCode } : null,
      bounce: d.bouncePhase ? { type: d.bouncePhase.type } : null,
    },
    in_msg: inMessage ? v3Message(inMessage) : null,
    out_msgs: [...tx.outMessages.values()].map(v3Message),
  };
}
