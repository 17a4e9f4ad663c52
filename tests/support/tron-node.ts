/**
 * A stand-in for a TRON full node's HTTP API (java-tron's /wallet/* with `visible: false`), in memory, on a free
 * port: no TRON node runs here. It is the one third party stood in for; what it is sent is real: every broadcast
 * transaction is CHECKED with tronweb before it is taken — raw_data re-encoded to the bytes of raw_data_hex, those
 * bytes decoded again and compared field by field, the txID recomputed as their sha256, the signer recovered from the
 * signature and compared with the owner, the reference block (TAPOS) and expiration checked, a TRC-20 call's data
 * decoded with the token's ABI (transfer(address,uint256)) — and refused with java-tron's codes otherwise (and noted
 * in `problems`). Accepted ones wait in the pending pool until `mine()` puts them in a block and executes them: TRX
 * and token balances move, bandwidth (600 free bytes per account, then 1,000 sun a byte), account activation (1.1 TRX)
 * and energy (100 sun a unit; ~64k for a transfer to a holder, ~130k to a new one) are burnt, a call whose fee_limit or
 * balance cannot pay runs OUT_OF_ENERGY, one moving more tokens than the sender holds REVERTs; transaction infos carry
 * the fee and the Transfer logs as a node's do.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sha256 } from '@noble/hashes/sha2.js';
import { utils } from 'tronweb';
import type { TronBlock, TronRawData, TronTransaction, TronTransactionInfo } from '../../src/server/adapters/chains/tron/api.ts';

export const TRC20_ABI = [
  { type: 'function', name: 'transfer', stateMutability: 'nonpayable', inputs: [{ name: '_to', type: 'address' }, { name: '_value', type: 'uint256' }], outputs: [{ name: '', type: 'bool' }] },
  { type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: '_owner', type: 'address' }], outputs: [{ name: '', type: 'uint256' }] },
];
const TRC20 = new utils.ethersUtils.Interface(TRC20_ABI);
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const PARAMETERS = { getTransactionFee: 1000, getEnergyFee: 100, getCreateAccountFee: 100_000, getCreateNewAccountFeeInSystemContract: 1_000_000 };
const FREE_BANDWIDTH = 600;
const BLOCK_MS = 3000;
const MAX_EXPIRATION_MS = 24 * 60 * 60 * 1000;

/** A private key nobody uses outside these tests: the faucet that sends deposits. */
export const FAUCET_KEY = '0f'.repeat(32);
export const FAUCET_ADDRESS = utils.crypto.pkToAddress(FAUCET_KEY);

/** What the stand-in saw in one transaction it accepted, decoded from its bytes. */
export type VerifiedTransaction = { txID: string; type: 'TransferContract' | 'TriggerSmartContract'; owner: string; to: string; amount: bigint; token?: string; feeLimit?: number };

type Account = { balance: bigint; freeNetUsed: number };
type Block = TronBlock & { transactions: TronTransaction[] };
type Refusal = { code: string; message: string };

const hex41 = (address: string) => utils.address.toHex(address).toLowerCase();
const base58 = (hex: string) => utils.address.fromHex(hex.length === 40 ? `41${hex}` : hex);
const hexMessage = (text: string) => Buffer.from(text).toString('hex');
const word = (value: bigint | string) => (typeof value === 'bigint' ? value.toString(16) : value).padStart(64, '0');

export type TronStandIn = {
  url: string;
  apiKey: string;
  /** Every refused transaction's reason that is a defect of its builder (bad encoding, signature, call data). */
  problems: string[];
  /** Transactions accepted, decoded, oldest first. */
  verified: VerifiedTransaction[];
  /** How many times a transaction id was broadcast to it (duplicates included). */
  received(txID: string): number;
  mine(blocks?: number): Block[];
  /** Takes the last `depth` blocks off the chain (mine to replace them): their transactions wait again, but those in `lose`. */
  reorg(depth: number, lose?: readonly string[]): void;
  /** Mines a block every `ms` until stopped. */
  autoMine(ms: number): () => void;
  head(): Block;
  info(txID: string): TronTransactionInfo | undefined;
  trx(address: string): bigint;
  token(contract: string, address: string): bigint;
  /** A deposit from the faucet: a real transaction signed with the faucet's key, sent through the HTTP API like any other. */
  send(input: { to: string; amount: bigint; token?: string; from?: string; feeLimit?: number }): Promise<string>;
  /**
   * Holds the answers to `path` for `txId` ('unknown': any the node was never sent) until `release`: the node has done the work (a broadcast is
   * taken) but the caller hears nothing, as when it dies or the connection drops.
   */
  hold(path: string, txId: string): { reached: Promise<void>; release: () => void };
  close(): Promise<void>;
};

export async function startTronStandIn(options: { tokens: Record<string, string>; apiKey?: string }): Promise<TronStandIn> {
  const apiKey = options.apiKey ?? 'stand-in-key';
  const accounts = new Map<string, Account>();
  const tokens = new Map<string, Map<string, bigint>>(Object.values(options.tokens).map((contract) => [hex41(contract), new Map()]));
  const faucet = hex41(FAUCET_ADDRESS);
  accounts.set(faucet, { balance: 10n ** 15n, freeNetUsed: 0 });
  for (const holders of tokens.values()) holders.set(faucet, 10n ** 15n);

  const genesisTime = Math.floor(Date.now() / 1000) * 1000;
  let forks = 0;
  const blocks: Block[] = [makeBlock(0, '0'.repeat(64), genesisTime, [])];
  /** The balances after each block, so a reorganisation can go back to them. */
  const snapshot = () => ({ accounts: new Map([...accounts].map(([k, v]) => [k, { ...v }])), tokens: new Map([...tokens].map(([k, v]) => [k, new Map(v)])) });
  const states = [snapshot()];
  const infos = new Map<string, TronTransactionInfo>();
  const inBlock = new Map<string, TronTransaction>();
  const pending: TronTransaction[] = [];
  const receivedCount = new Map<string, number>();
  const problems: string[] = [];
  const verified: VerifiedTransaction[] = [];
  const holds: { path: string; txId: string; reached: () => void; released: Promise<void>; release: () => void }[] = [];

  const head = () => blocks[blocks.length - 1] as Block;

  function makeBlock(number: number, parent: string, timestamp: number, transactions: TronTransaction[]): Block {
    const digest = Buffer.from(sha256(Buffer.from(`${forks}:${parent}:${number}:${timestamp}:${transactions.map((t) => t.txID).join(',')}`))).toString('hex');
    return { blockID: number.toString(16).padStart(16, '0') + digest.slice(16), block_header: { raw_data: { number, timestamp, parentHash: parent } }, transactions };
  }

  /** The checks of a broadcast transaction; the decoded transfer, or a refusal (java-tron's codes). */
  function check(tx: TronTransaction): VerifiedTransaction | Refusal {
    const defect = (message: string): Refusal => {
      problems.push(`${tx.txID}: ${message}`);
      return { code: 'SIGERROR', message };
    };
    const raw = tx.raw_data as TronRawData | undefined;
    const contract = raw?.contract?.[0];
    if (!raw || !contract || raw.contract.length !== 1 || typeof tx.raw_data_hex !== 'string' || !tx.signature?.[0]) return defect('not a signed transaction with one contract');
    const encoded = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: raw, visible: false })).toLowerCase();
    if (encoded !== tx.raw_data_hex.toLowerCase()) return defect('raw_data_hex is not the encoding of raw_data');
    const txID = Buffer.from(sha256(Buffer.from(encoded, 'hex'))).toString('hex');
    if (txID !== tx.txID) return defect(`txID is not sha256 of raw_data (${txID})`);
    const decoded = utils.deserializeTx.deserializeTransaction(contract.type, encoded) as { contract: { parameter: { value: Record<string, unknown> } }[]; fee_limit: number; expiration: number; ref_block_bytes: string; ref_block_hash: string };
    const value = decoded.contract[0]?.parameter.value ?? {};
    const owner = String(value.owner_address).toLowerCase();
    const signer = utils.crypto.ecRecover(txID, tx.signature[0]).toLowerCase();
    if (signer !== owner) return defect(`signed by ${signer}, owner is ${owner}`);
    if (owner !== String(contract.parameter.value.owner_address).toLowerCase()) return defect('owner_address of raw_data and of its bytes differ');
    if (decoded.expiration !== raw.expiration || decoded.ref_block_bytes.toLowerCase() !== raw.ref_block_bytes || decoded.ref_block_hash.toLowerCase() !== raw.ref_block_hash) return defect('TAPOS fields differ from their bytes');
    if (!blocks.some((b) => b.blockID.slice(12, 16) === raw.ref_block_bytes && b.blockID.slice(16, 32) === raw.ref_block_hash)) return { code: 'TAPOS_ERROR', message: 'Tapos check error' };
    const now = head().block_header.raw_data.timestamp;
    if (raw.expiration <= now || raw.expiration > now + MAX_EXPIRATION_MS) return { code: 'TRANSACTION_EXPIRATION_ERROR', message: 'Transaction expired' };
    if (inBlock.has(txID) || pending.some((p) => p.txID === txID)) return { code: 'DUP_TRANSACTION_ERROR', message: 'Dup transaction' };
    const from = accounts.get(owner);
    if (!from) return { code: 'CONTRACT_VALIDATE_ERROR', message: `Validate ${contract.type} error, no OwnerAccount.` };
    if (contract.type === 'TransferContract') {
      const to = String(value.to_address).toLowerCase();
      const amount = BigInt(String(value.amount));
      if (to !== String(contract.parameter.value.to_address).toLowerCase() || amount !== BigInt(String(contract.parameter.value.amount))) return defect('to_address or amount of raw_data and of its bytes differ');
      if (amount <= 0n) return { code: 'CONTRACT_VALIDATE_ERROR', message: 'Amount must be greater than 0.' };
      if (from.balance < amount + fees(owner, to, encoded, 0n)) return { code: 'CONTRACT_VALIDATE_ERROR', message: 'Validate TransferContract error, balance is not sufficient.' };
      return { txID, type: 'TransferContract', owner: base58(owner), to: base58(to), amount };
    }
    if (contract.type === 'TriggerSmartContract') {
      const token = String(value.contract_address).toLowerCase();
      if (token !== String(contract.parameter.value.contract_address).toLowerCase() || String(value.data).toLowerCase() !== String(contract.parameter.value.data).toLowerCase()) return defect('contract_address or data of raw_data and of its bytes differ');
      if (!tokens.has(token)) return { code: 'CONTRACT_VALIDATE_ERROR', message: 'No contract or not a smart contract' };
      let call;
      try {
        call = TRC20.parseTransaction({ data: `0x${String(value.data)}` });
      } catch {
        return defect('call data is not a call of the TRC-20 ABI');
      }
      if (call?.name !== 'transfer') return defect(`a call of ${call?.name ?? 'nothing'}, not transfer(address,uint256)`);
      if (!decoded.fee_limit || decoded.fee_limit !== raw.fee_limit || decoded.fee_limit > 15_000_000_000) return defect(`fee_limit ${decoded.fee_limit} missing, out of range or not its bytes'`);
      const to = `41${String(call.args[0]).slice(2).toLowerCase()}`;
      return { txID, type: 'TriggerSmartContract', owner: base58(owner), to: base58(to), amount: BigInt(String(call.args[1])), token: base58(token), feeLimit: decoded.fee_limit };
    }
    return { code: 'CONTRACT_VALIDATE_ERROR', message: `${contract.type} is not taken by this stand-in` };
  }

  /** Bandwidth (free, else burnt) and activation a transaction costs its owner, in sun; `use` spends the free bandwidth. */
  function fees(owner: string, to: string | undefined, rawHex: string, energyFee: bigint, use = false): bigint {
    const bytes = rawHex.length / 2 + 134;
    const account = accounts.get(owner);
    let fee = energyFee;
    if (account && account.freeNetUsed + bytes <= FREE_BANDWIDTH) {
      if (use) account.freeNetUsed += bytes;
    } else fee += BigInt(bytes * PARAMETERS.getTransactionFee);
    if (to !== undefined && !accounts.has(to)) fee += BigInt(PARAMETERS.getCreateAccountFee + PARAMETERS.getCreateNewAccountFeeInSystemContract);
    return fee;
  }

  /** Executes a pending transaction in block `number`; false when it can no longer be (it stays out). */
  function execute(tx: TronTransaction, number: number, timestamp: number): boolean {
    const value = tx.raw_data.contract[0]?.parameter.value ?? {};
    const owner = String(value.owner_address).toLowerCase();
    const from = accounts.get(owner);
    if (!from || tx.raw_data.expiration <= timestamp) return false;
    const info: TronTransactionInfo = { id: tx.txID, blockNumber: number, blockTimeStamp: timestamp, receipt: {} };
    let ret = 'SUCCESS';
    if (tx.raw_data.contract[0]?.type === 'TransferContract') {
      const to = String(value.to_address).toLowerCase();
      const amount = BigInt(String(value.amount));
      const fee = fees(owner, to, tx.raw_data_hex, 0n);
      if (from.balance < amount + fee) return false;
      fees(owner, to, tx.raw_data_hex, 0n, true);
      from.balance -= amount + fee;
      const recipient = accounts.get(to) ?? { balance: 0n, freeNetUsed: 0 };
      recipient.balance += amount;
      accounts.set(to, recipient);
      if (fee > 0n) info.fee = Number(fee);
    } else {
      const token = String(value.contract_address).toLowerCase();
      const holders = tokens.get(token) ?? new Map<string, bigint>();
      const call = TRC20.parseTransaction({ data: `0x${String(value.data)}` });
      const to = `41${String(call?.args[0]).slice(2).toLowerCase()}`;
      const amount = BigInt(String(call?.args[1]));
      const held = holders.get(owner) ?? 0n;
      const energy = held < amount ? 1_000n : (holders.get(to) ?? 0n) > 0n ? 64_285n : 130_285n;
      const energyFee = energy * BigInt(PARAMETERS.getEnergyFee);
      const bandwidth = fees(owner, undefined, tx.raw_data_hex, 0n);
      const feeLimit = BigInt(tx.raw_data.fee_limit ?? 0);
      if (from.balance < bandwidth) return false;
      if (energyFee > feeLimit || from.balance < energyFee + bandwidth) {
        ret = 'OUT_OF_ENERGY';
        const burnt = (feeLimit < from.balance - bandwidth ? feeLimit : from.balance - bandwidth) + bandwidth;
        fees(owner, undefined, tx.raw_data_hex, 0n, true);
        from.balance -= burnt;
        Object.assign(info, { fee: Number(burnt), result: 'FAILED', resMessage: hexMessage('Not enough energy for transfer'), receipt: { result: ret, energy_fee: Number(burnt - bandwidth) } });
      } else {
        fees(owner, undefined, tx.raw_data_hex, 0n, true);
        const fee = energyFee + bandwidth;
        from.balance -= fee;
        info.fee = Number(fee);
        if (held < amount) {
          ret = 'REVERT';
          Object.assign(info, { result: 'FAILED', resMessage: hexMessage('REVERT opcode executed'), receipt: { result: ret, energy_usage_total: Number(energy), energy_fee: Number(energyFee) } });
        } else {
          holders.set(owner, held - amount);
          holders.set(to, (holders.get(to) ?? 0n) + amount);
          info.receipt = { result: 'SUCCESS', energy_usage_total: Number(energy), energy_fee: Number(energyFee) };
          info.log = [{ address: token.slice(2), topics: [TRANSFER_TOPIC, word(owner.slice(2)), word(to.slice(2))], data: word(amount) }];
        }
      }
    }
    infos.set(tx.txID, info);
    inBlock.set(tx.txID, { ...tx, ret: [{ contractRet: ret }] });
    return true;
  }

  const mine = (count = 1): Block[] => {
    const made: Block[] = [];
    for (let i = 0; i < count; i++) {
      const parent = head();
      const number = parent.block_header.raw_data.number + 1;
      const timestamp = parent.block_header.raw_data.timestamp + BLOCK_MS;
      const included = pending.splice(0).filter((tx) => execute(tx, number, timestamp));
      const block = makeBlock(number, parent.blockID, timestamp, included.map((tx) => inBlock.get(tx.txID) as TronTransaction));
      blocks.push(block);
      states.push(snapshot());
      made.push(block);
    }
    return made;
  };

  /** Takes the last `depth` blocks off the chain; their transactions go back to the pending pool but those in `lose`. */
  const reorg = (depth: number, lose: readonly string[]) => {
    forks += 1;
    const orphaned = blocks.splice(blocks.length - depth, depth);
    states.splice(states.length - depth, depth);
    const state = states[states.length - 1];
    if (!state) throw new Error('cannot reorganise the genesis block away');
    accounts.clear();
    for (const [k, v] of state.accounts) accounts.set(k, { ...v });
    tokens.clear();
    for (const [k, v] of state.tokens) tokens.set(k, new Map(v));
    const lost = orphaned.flatMap((b) => b.transactions);
    for (const tx of lost) {
      infos.delete(tx.txID);
      inBlock.delete(tx.txID);
    }
    pending.unshift(...lost.filter((tx) => !lose.includes(tx.txID)).map(({ ret: _ret, ...tx }) => tx));
  };

  const broadcast = (tx: TronTransaction) => {
    receivedCount.set(tx.txID, (receivedCount.get(tx.txID) ?? 0) + 1);
    const outcome = check(tx);
    if ('code' in outcome) return { result: false, code: outcome.code, message: hexMessage(outcome.message), txid: tx.txID };
    pending.push(tx);
    verified.push(outcome);
    return { result: true, txid: tx.txID };
  };

  const constant = (body: { owner_address: string; contract_address: string; function_selector: string; parameter: string }) => {
    const holders = tokens.get(body.contract_address.toLowerCase());
    if (!holders) return { result: { result: false, code: 'CONTRACT_VALIDATE_ERROR', message: hexMessage('No contract or not a smart contract') } };
    if (body.function_selector === 'balanceOf(address)') {
      const holder = `41${body.parameter.slice(24, 64).toLowerCase()}`;
      return { result: { result: true }, energy_used: 500, constant_result: [word(holders.get(holder) ?? 0n)] };
    }
    if (body.function_selector === 'transfer(address,uint256)') {
      const to = `41${body.parameter.slice(24, 64).toLowerCase()}`;
      const amount = BigInt(`0x${body.parameter.slice(64, 128)}`);
      if ((holders.get(body.owner_address.toLowerCase()) ?? 0n) < amount) return { result: { result: false, code: 'CONTRACT_EXE_ERROR', message: hexMessage('REVERT opcode executed') }, energy_used: 1000 };
      return { result: { result: true }, energy_used: (holders.get(to) ?? 0n) > 0n ? 64_285 : 130_285, constant_result: [word(1n)] };
    }
    return { result: { result: false, code: 'CONTRACT_VALIDATE_ERROR', message: hexMessage(`${body.function_selector} is not served`) } };
  };

  const routes: Record<string, (body: Record<string, unknown>) => unknown> = {
    '/wallet/getnowblock': () => head(),
    '/wallet/getblockbynum': (body) => blocks[Number(body.num)] ?? {},
    '/wallet/gettransactioninfobyid': (body) => infos.get(String(body.value)) ?? {},
    '/wallet/gettransactioninfobyblocknum': (body) => (blocks[Number(body.num)]?.transactions ?? []).map((tx) => infos.get(tx.txID)),
    '/wallet/gettransactionbyid': (body) => inBlock.get(String(body.value)) ?? {},
    '/wallet/gettransactionfrompending': (body) => pending.find((tx) => tx.txID === body.value) ?? {},
    '/wallet/broadcasttransaction': (body) => broadcast(body as unknown as TronTransaction),
    '/wallet/triggerconstantcontract': (body) => constant(body as Parameters<typeof constant>[0]),
    '/wallet/getaccount': (body) => {
      const account = accounts.get(String(body.address).toLowerCase());
      return account ? { address: String(body.address).toLowerCase(), balance: Number(account.balance) } : {};
    },
    '/wallet/getaccountresource': (body) => {
      const account = accounts.get(String(body.address).toLowerCase());
      return account ? { freeNetLimit: FREE_BANDWIDTH, freeNetUsed: account.freeNetUsed } : {};
    },
    '/wallet/getchainparameters': () => ({ chainParameter: Object.entries(PARAMETERS).map(([key, value]) => ({ key, value })) }),
  };

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const reply = (status: number, body: unknown) => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        };
        if (request.headers['tron-pro-api-key'] !== apiKey) return reply(401, { Error: 'missing or wrong TRON-PRO-API-KEY' });
        const route = routes[request.url ?? ''];
        if (request.method !== 'POST' || !route) return reply(404, { Error: `no ${request.method} ${request.url}` });
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        } catch {
          return reply(400, { Error: 'not JSON' });
        }
        const txId = String(body.txID ?? body.value ?? '');
        const unknown = !receivedCount.has(txId);
        // The node does the work, then its answer is held: a broadcast held is taken, its sender never hears so.
        const answer = route(body);
        const held = holds.find((h) => h.path === request.url && (h.txId === txId || (h.txId === 'unknown' && unknown)));
        if (held) {
          held.reached();
          await held.released;
        }
        reply(200, answer);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    apiKey,
    problems,
    verified,
    received: (txID) => receivedCount.get(txID) ?? 0,
    mine,
    reorg: (depth, lose = []) => reorg(depth, lose),
    autoMine(ms) {
      const timer = setInterval(() => mine(), ms);
      return () => clearInterval(timer);
    },
    head,
    info: (txID) => infos.get(txID),
    trx: (address) => accounts.get(hex41(address))?.balance ?? 0n,
    token: (contract, address) => tokens.get(hex41(contract))?.get(hex41(address)) ?? 0n,
    async send({ to, amount, token, from = FAUCET_KEY, feeLimit = 100_000_000 }) {
      const owner = utils.address.toHex(utils.crypto.pkToAddress(from)).toLowerCase();
      const block = head();
      const tapos = { ref_block_bytes: block.blockID.slice(12, 16), ref_block_hash: block.blockID.slice(16, 32), expiration: block.block_header.raw_data.timestamp + 60_000, timestamp: Date.now() };
      const raw_data = token
        ? {
            contract: [
              {
                type: 'TriggerSmartContract',
                parameter: { type_url: 'type.googleapis.com/protocol.TriggerSmartContract', value: { owner_address: owner, contract_address: hex41(token), data: TRC20.encodeFunctionData('transfer', [`0x${hex41(to).slice(2)}`, amount]).slice(2) } },
              },
            ],
            ...tapos,
            fee_limit: feeLimit,
          }
        : { contract: [{ type: 'TransferContract', parameter: { type_url: 'type.googleapis.com/protocol.TransferContract', value: { owner_address: owner, to_address: hex41(to), amount: Number(amount) } } }], ...tapos };
      const rawHex = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data, visible: false })).toLowerCase();
      const txID = Buffer.from(sha256(Buffer.from(rawHex, 'hex'))).toString('hex');
      const signed = utils.crypto.signTransaction(from, { txID, raw_data, raw_data_hex: rawHex, visible: false });
      const answer = (await (await fetch(`${url}/wallet/broadcasttransaction`, { method: 'POST', headers: { 'TRON-PRO-API-KEY': apiKey }, body: JSON.stringify(signed) })).json()) as { result?: boolean; code?: string };
      if (answer.result !== true) throw new Error(`the stand-in refused the faucet's transaction: ${answer.code}`);
      return txID;
    },
    hold(path, txId) {
      let reached!: () => void;
      let release!: () => void;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      const entry = { path, txId, reached, released, release };
      holds.push(entry);
      return {
        reached: reachedPromise,
        release: () => {
          holds.splice(holds.indexOf(entry), 1);
          release();
        },
      };
    },
    async close() {
      for (const held of holds.splice(0)) held.release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
