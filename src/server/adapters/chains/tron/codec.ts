/**
 * TRON transactions built here, not by the node: the raw_data (TransferContract or TriggerSmartContract calling a
 * TRC-20's transfer(address,uint256)) on a reference block the node named, serialised to protobuf with tronweb's
 * own encoder, its txID (sha256 of the raw_data bytes) known before sending, and a secp256k1 signature over the txID.
 */
import { createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import type * as TronWebModule from 'tronweb';
import type { TronBlock, TronRawData, TronTransaction } from './api.ts';
import { type Units } from '../../../../lib/money.ts';

const base58check = createBase58check(sha256);

/** tronweb takes over a second to load: only a process that signs TRON transactions loads it, once. */
let tronweb: Promise<typeof TronWebModule> | undefined;
const tronUtils = async () => (await (tronweb ??= import('tronweb'))).utils;

/** transfer(address,uint256) */
export const TRANSFER_SELECTOR = 'a9059cbb';
/** keccak256("Transfer(address,address,uint256)"): the TRC-20 Transfer event's first topic. */
export const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** `T…` (base58check) to the node's hex form `41…` (lower case). */
export function toHexAddress(address: string): string {
  return Buffer.from(base58check.decode(address)).toString('hex');
}

/** The node's hex form (`41…`, or the 20-byte body a log carries) to `T…`. */
export function fromHexAddress(hex: string): string {
  const body = hex.length === 40 ? `41${hex}` : hex;
  return base58check.encode(Buffer.from(body, 'hex'));
}

/** What a transaction refers to: the last two bytes of the block's height and bytes 8–16 of its id (TAPOS). */
export function referenceOf(block: TronBlock): Pick<TronRawData, 'ref_block_bytes' | 'ref_block_hash'> {
  return { ref_block_bytes: block.blockID.slice(12, 16), ref_block_hash: block.blockID.slice(16, 32) };
}

/** A JSON number for the node; amounts beyond 2^53 sun (9 billion TRX) are refused rather than rounded. */
function int64(value: bigint, what: string): number {
  if (value <= 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} ${value} is out of range`);
  return Number(value);
}

export type Tapos = Pick<TronRawData, 'ref_block_bytes' | 'ref_block_hash' | 'expiration' | 'timestamp'>;

export function trxTransfer(from: string, to: string, amount: Units, tapos: Tapos): TronRawData {
  return {
    contract: [
      {
        parameter: { value: { owner_address: toHexAddress(from), to_address: toHexAddress(to), amount: int64(amount, 'amount') }, type_url: 'type.googleapis.com/protocol.TransferContract' },
        type: 'TransferContract',
      },
    ],
    ...tapos,
  };
}

/** transfer(to, amount) ABI-encoded, without 0x: the call data of a TRC-20 transfer. */
export function trc20TransferData(to: string, amount: Units): string {
  return TRANSFER_SELECTOR + trc20TransferParameter(to, amount);
}

/** The ABI encoding of (address, uint256): two 32-byte words, the address's 20 bytes without the 0x41 prefix. */
export function trc20TransferParameter(to: string, amount: Units): string {
  if (amount <= 0n || amount >= 2n ** 256n) throw new RangeError(`amount ${amount} is out of range`);
  return toHexAddress(to).slice(2).padStart(64, '0') + amount.toString(16).padStart(64, '0');
}

export function trc20Transfer(from: string, token: string, to: string, amount: Units, feeLimit: Units, tapos: Tapos): TronRawData {
  return {
    contract: [
      {
        parameter: {
          value: { owner_address: toHexAddress(from), contract_address: toHexAddress(token), data: trc20TransferData(to, amount) },
          type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
        },
        type: 'TriggerSmartContract',
      },
    ],
    ...tapos,
    fee_limit: int64(feeLimit, 'fee_limit'),
  };
}

/** The raw_data's protobuf bytes (tronweb's encoder) and its txID, sha256 of those bytes. */
export async function encodeRawData(raw: TronRawData): Promise<{ rawDataHex: string; txID: string }> {
  const utils = await tronUtils();
  const rawDataHex = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: raw, visible: false })).toLowerCase();
  return { rawDataHex, txID: Buffer.from(sha256(Buffer.from(rawDataHex, 'hex'))).toString('hex') };
}

/** The signed transaction, as broadcasttransaction takes it. */
export async function signTransaction(raw: TronRawData, privateKey: Uint8Array): Promise<TronTransaction> {
  const { rawDataHex, txID } = await encodeRawData(raw);
  const signature = (await tronUtils()).crypto.ECKeySign(Buffer.from(txID, 'hex'), privateKey);
  return { visible: false, txID, raw_data: raw, raw_data_hex: rawDataHex, signature: [signature] };
}

/** A 32-byte ABI word (hex) as an amount. */
export function word(hex: string | undefined): bigint {
  return hex ? BigInt(`0x${hex.slice(0, 64) || '0'}`) : 0n;
}
