/**
 * Reading TON: deposits by masterchain block, never by polling addresses. Each masterchain block's transactions
 * (every shard block it committed, toncenter v3 `transactions?mc_seqno=`) are matched against the custody's deposit
 * wallets held in memory by raw address (loaded from `deposit_addresses` once, then only the new rows), so the cost of
 * a scan grows with the chain, not with the number of users. The cursor is `seqno:root_hash` of the last masterchain
 * block read (block-scan.ts); the indexer serves finalised blocks only, so a reorganisation does not happen, but the
 * cursor keeps the common format and the check.
 */
import type pg from 'pg';
import { Address } from '@ton/core';
import { scanBlocks, type BlockSource } from '../block-scan.ts';
import type { ChainTransfer } from '../port.ts';
import type { TonApi, V3Transaction } from './api.ts';
import { hexHash } from './api.ts';
import { createAddressSet, entryBuffers, readDepositAddresses } from '../address-set.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** How far a cursor on a lost block rewinds. */
const REWIND = 16;
/** Masterchain blocks read per scan at most (two requests each): a scan catching up stays well inside a job's run. */
const MAX_BLOCKS = 100;

/** `raw` (`0:…`, any case) as @ton/core prints it, the key of the address set. */
export function rawAddress(address: string): string {
  return Address.parse(address).toRawString();
}

/** The length of a friendly address as the custody stores it: 36 bytes in base64. */
const FRIENDLY_LENGTH = 48;

/** An address's key in the set: its workchain's byte and its 32-byte hash, as in the friendly form's bytes 1..33. */
function keyOfRaw(raw: string): Buffer | undefined {
  const [workchain, hash] = raw.split(':');
  if (hash?.length !== 64) return undefined;
  return Buffer.concat([Buffer.from([Number(workchain) & 0xff]), Buffer.from(hash, 'hex')]);
}

/**
 * The custody's deposit wallets by raw address, each with the address as the custody stores it. A stored friendly
 * form's bytes are read directly, without @ton/core's checksum, which would cost seconds over 100,000 rows; the set
 * is compact (address-set.ts): a million wallets in about 81 MB.
 */
export function createDepositAddressSet(pool: pg.Pool) {
  const set = createAddressSet(33, FRIENDLY_LENGTH);
  // Stored in another form than a 48-character friendly one (none the custody writes itself), by raw address.
  const others = new Map<string, string>();
  let since: Date | null = null;
  return {
    async refresh(): Promise<void> {
      const found = entryBuffers(33, FRIENDLY_LENGTH);
      since = await readDepositAddresses(pool, 'TON', since, (address) => {
        if (address.length === FRIENDLY_LENGTH) found.push(Buffer.from(address, 'base64').subarray(1, 34), address);
        else others.set(rawAddress(address), address);
      });
      found.addTo(set);
    },
    lookup: (raw: string): string | undefined => {
      const key = keyOfRaw(raw);
      return (key && set.get(key)) ?? others.get(raw);
    },
    get size() {
      return set.size + others.size;
    },
  };
}

/**
 * What an incoming transaction put on the account, or undefined when it is not a transfer to count: an external
 * message, a bounce coming back, a message that bounced (its value went back to the sender), or a compute or action
 * phase that failed. A plain transfer to an undeployed deposit wallet is aborted with a skipped compute phase (no
 * code yet) and keeps its value: that one counts.
 */
export function incomingValue(tx: V3Transaction): Units<'TON'> | undefined {
  const message = tx.in_msg;
  const d = tx.description;
  if (!message?.source || message.bounced || d.type !== 'ord' || d.bounce) return undefined;
  if (d.compute_ph && !d.compute_ph.skipped && d.compute_ph.success === false) return undefined;
  if (d.action && d.action.success === false) return undefined;
  const value = unitsOf<'TON'>(BigInt(d.credit_ph?.credit ?? message.value ?? '0'));
  return value > 0n ? value : undefined;
}

/** The network fee a transaction of ours paid: its own fees and the forwarding fees of the messages it sent. */
export function feeOf(tx: V3Transaction): Units<'TON'> {
  return unitsOf(tx.out_msgs.reduce((sum, m) => sum + BigInt(m.fwd_fee ?? '0') + BigInt(m.ihr_fee ?? '0'), BigInt(tx.total_fees)));
}

/**
 * Why a transaction of our wallet did nothing, or undefined when it sent what it was signed for (each of our
 * messages carries exactly one transfer). Our messages use IGNORE_ERRORS, so a transfer the wallet cannot pay is
 * skipped in a successful action phase (and the seqno moves on): no message out is the failure.
 */
export function failureOf(tx: V3Transaction): string | undefined {
  const d = tx.description;
  if (d.compute_ph && !d.compute_ph.skipped && d.compute_ph.success === false) return `compute phase failed (exit code ${d.compute_ph.exit_code ?? '?'})`;
  if (d.action && d.action.success === false) return `action phase failed (result code ${d.action.result_code ?? '?'})`;
  if (d.aborted) return 'transaction aborted';
  if (tx.out_msgs.length === 0) return `the wallet sent nothing: the transfer was skipped in the action phase (result code ${d.action?.result_code ?? '?'}), e.g. for want of balance`;
  return undefined;
}

export function createTonScanner(api: TonApi, addresses: ReturnType<typeof createDepositAddressSet>, format: (raw: string) => string) {
  const transfersOf = (transactions: V3Transaction[], height: number): ChainTransfer[] => {
    const out: ChainTransfer[] = [];
    for (const tx of transactions) {
      const to = addresses.lookup(rawAddress(tx.account));
      if (!to) continue;
      const amount = incomingValue(tx);
      if (amount === undefined) continue;
      const source = tx.in_msg?.source;
      // A deployed wallet pays for taking a transfer in (compute, storage): the credit is the value, the wallet keeps less.
      const receiveFee = unitsOf<'TON'>(BigInt(tx.total_fees));
      out.push({ network: 'TON', txHash: hexHash(tx.hash), outputIndex: 0, currency: 'TON', fromAddress: source ? format(source) : null, toAddress: to, amount, blockHeight: height, ...(receiveFee > 0n ? { receiveFee } : {}) });
    }
    return out;
  };

  return async (cursor: string | null, limit: number) => {
    await addresses.refresh();
    const tip = await api.tip();
    const hashes = new Map<number, Promise<string | undefined>>([[tip.seqno, Promise.resolve(tip.hash)]]);
    const hashAt = (seqno: number) => {
      let hash = hashes.get(seqno);
      if (!hash) {
        hash = api.masterchainBlockHash(seqno);
        hashes.set(seqno, hash);
      }
      return hash;
    };
    const source: BlockSource = {
      tipHeight: async () => tip.seqno,
      hashAt: async (height) => (height > tip.seqno ? undefined : hashAt(height)),
      async blockAt(height) {
        const [hash, transactions] = await Promise.all([hashAt(height), api.transactionsOfMasterchainBlock(height)]);
        if (hash === undefined) throw new Error(`the TON API has no masterchain block ${height}`);
        return { block: { height, hash }, transfers: transfersOf(transactions, height) };
      },
    };
    // A custody's first scan starts at the chain's tip: earlier blocks hold nothing of its addresses.
    return scanBlocks(source, cursor, { startHeight: tip.seqno, limit: Math.min(limit, MAX_BLOCKS), rewindDepth: REWIND });
  };
}
