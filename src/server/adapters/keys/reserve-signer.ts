/**
 * Signs a proof of reserves' message with the key of one custody address, in the form the address's own network
 * checks (README "Proof of reserves"): BIP-322 simple for P2WPKH (Bitcoin, Litecoin), the legacy signed message for
 * P2PKH (Dogecoin, as BIP-322 prescribes for it), EIP-191 personal_sign (Ethereum), TRON's signMessageV2, and for TON
 * an ed25519 signature of the message's SHA-256 with the wallet v4R2's public key (the address commits to it).
 * It signs with the custody's keys (WalletKeys): only a process holding the seed (the signer, or `npm run custody`,
 * which loads it as the operator's tool) has their private halves.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { sign as tonSign } from '@ton/crypto';
import type { ReserveKey, ReserveSignature, WalletKeys } from './port.ts';


export async function signReserveMessage(keys: WalletKeys, key: ReserveKey, message: string): Promise<ReserveSignature> {
  if (key.network === 'TON') {
    const indices = /^m\/44'\/607'\/(\d+)'$/.exec(key.path);
    if (!indices?.[1]) throw new Error(`not a TON path: ${key.path}`);
    const pair = await keys.ed25519(Number(indices[1]));
    const signature = tonSign(Buffer.from(sha256(utf8ToBytes(message))), pair.secretKey);
    return { type: 'ton-ed25519-sha256', signature: signature.toString('base64'), publicKey: pair.publicKey.toString('hex') };
  }
  const hd = keys.derive(key.path);
  const privateKey = hd.privateKey;
  const publicKey = hd.publicKey;
  if (!privateKey || !publicKey) throw new Error(`no key at ${key.path}`);
  switch (key.network) {
    case 'BITCOIN':
    case 'LITECOIN':
      return { type: 'bip322-simple', signature: bip322Simple(privateKey, publicKey, message) };
    case 'DOGECOIN':
      return { type: 'bitcoin-signed-message', signature: signedMessage(privateKey, 'Dogecoin Signed Message:\n', message) };
    case 'ETHEREUM':
      return { type: 'eip191', signature: recoverable(privateKey, prefixedKeccak('\x19Ethereum Signed Message:\n', message)) };
    case 'TRON':
      return { type: 'tron-v2', signature: recoverable(privateKey, prefixedKeccak('\x19TRON Signed Message:\n', message)) };
  }
}

const dsha = (bytes: Uint8Array) => sha256(sha256(bytes));
const le32 = (n: number) => Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
const ZERO8 = new Uint8Array(8);

function varint(n: number): Uint8Array {
  if (n < 0xfd) return Uint8Array.of(n);
  if (n <= 0xffff) return Uint8Array.of(0xfd, n & 0xff, n >>> 8);
  return concatBytes(Uint8Array.of(0xfe), le32(n));
}

function taggedHash(tag: string, message: Uint8Array): Uint8Array {
  const t = sha256(utf8ToBytes(tag));
  return sha256(concatBytes(t, t, message));
}

/** BIP-322 "simple" for P2WPKH: the witness of the virtual to_sign transaction, serialised and in base64. */
function bip322Simple(privateKey: Uint8Array, publicKey: Uint8Array, message: string): string {
  const keyHash = ripemd160(sha256(publicKey));
  const scriptPubKey = concatBytes(Uint8Array.of(0x00, 0x14), keyHash);
  const messageHash = taggedHash('BIP0322-signed-message', utf8ToBytes(message));
  const toSpend = concatBytes(
    le32(0), varint(1), new Uint8Array(32), le32(0xffffffff), varint(34), Uint8Array.of(0x00, 0x20), messageHash, le32(0),
    varint(1), ZERO8, varint(scriptPubKey.length), scriptPubKey, le32(0),
  );
  const toSpendId = dsha(toSpend);
  const outpoint = concatBytes(toSpendId, le32(0));
  const scriptCode = concatBytes(Uint8Array.of(0x19, 0x76, 0xa9, 0x14), keyHash, Uint8Array.of(0x88, 0xac));
  const outputs = concatBytes(ZERO8, varint(1), Uint8Array.of(0x6a));
  const preimage = concatBytes(le32(0), dsha(outpoint), dsha(le32(0)), outpoint, scriptCode, ZERO8, le32(0), dsha(outputs), le32(0), le32(1));
  const der = secp256k1.sign(dsha(preimage), privateKey, { prehash: false, format: 'der', lowS: true });
  const signature = concatBytes(der, Uint8Array.of(0x01));
  const witness = concatBytes(varint(2), varint(signature.length), signature, varint(publicKey.length), publicKey);
  return Buffer.from(witness).toString('base64');
}

/** The legacy signed message (`signmessage`): a compact recoverable signature, compressed key, in base64. */
function signedMessage(privateKey: Uint8Array, magic: string, message: string): string {
  const magicBytes = utf8ToBytes(magic);
  const body = utf8ToBytes(message);
  const hash = dsha(concatBytes(varint(magicBytes.length), magicBytes, varint(body.length), body));
  const recovered = secp256k1.sign(hash, privateKey, { prehash: false, format: 'recovered' });
  const header = 27 + 4 + (recovered[0] ?? 0);
  return Buffer.from(concatBytes(Uint8Array.of(header), recovered.slice(1))).toString('base64');
}

function prefixedKeccak(prefix: string, message: string): Uint8Array {
  const body = utf8ToBytes(message);
  return keccak_256(concatBytes(utf8ToBytes(`${prefix}${body.length}`), body));
}

/** r ‖ s ‖ v (27 or 28), 0x-hex: the form personal_sign and signMessageV2 answer. */
function recoverable(privateKey: Uint8Array, hash: Uint8Array): string {
  const recovered = secp256k1.sign(hash, privateKey, { prehash: false, format: 'recovered' });
  const v = 27 + (recovered[0] ?? 0);
  return `0x${Buffer.from(concatBytes(recovered.slice(1), Uint8Array.of(v))).toString('hex')}`;
}
