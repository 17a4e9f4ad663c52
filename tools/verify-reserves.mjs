#!/usr/bin/env node
/**
 * Checks a published proof of reserves from its JSON alone (README "Proof of reserves"):
 *   node tools/verify-reserves.mjs <proof.json or https://…/api/reserves> [my-leaf.json]
 * - the liabilities' root: its sums are the published totals, none negative;
 * - every address's signature over the proof's message, in its network's form, by the key the address commits to;
 * - with a leaf (Settings → Proof of reserves → "Download my leaf", or GET /api/reserves/mine): that its nonce and
 *   balances lead by its path to the root, every sum on the way added and never negative.
 * Plain Node 20+, on well-known libraries only: @noble/hashes, @noble/curves, @scure/base, @ton/core, @ton/crypto, @ton/ton.
 * Exits 0 when everything holds, 1 (naming each failure) when anything does not.
 */
/* global fetch */
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { base58check as base58checkOf, bech32 } from '@scure/base';
import { Address } from '@ton/core';
import { signVerify } from '@ton/crypto';
import { WalletContractV4 } from '@ton/ton';

const base58check = base58checkOf(sha256);
const dsha = (bytes) => sha256(sha256(bytes));
const le32 = (n) => Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
const ZERO8 = new Uint8Array(8);
const varint = (n) => (n < 0xfd ? Uint8Array.of(n) : n <= 0xffff ? Uint8Array.of(0xfd, n & 0xff, n >>> 8) : concatBytes(Uint8Array.of(0xfe), le32(n)));
const hash160 = (bytes) => ripemd160(sha256(bytes));
const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// ---- the Merkle sum tree ----
const hashText = (text) => bytesToHex(sha256(utf8ToBytes(text)));
const units = (value) => {
  if (typeof value !== 'string' || !/^\d{1,90}$/.test(value)) throw new Error(`not a non-negative integer: ${value}`);
  return BigInt(value);
};
export const leafHash = (nonce, sums) => hashText(`por-leaf:${nonce}:${sums.join(',')}`);
export function parent(left, right) {
  if (left.sums.length !== right.sums.length) throw new Error('nodes with different asset counts');
  const sums = left.sums.map((s, i) => String(units(s) + units(right.sums[i])));
  return { hash: hashText(`por-node:${left.hash}:${right.hash}:${sums.join(',')}`), sums };
}
export function checkInclusion(proof, leaf) {
  if (leaf.proofId !== proof.id) return `the leaf is of proof ${leaf.proofId}, not ${proof.id}`;
  leaf.balances.forEach(units);
  let node = { hash: leafHash(leaf.nonce, leaf.balances), sums: leaf.balances };
  if (leaf.leaf !== undefined && leaf.leaf !== node.hash) return 'the leaf hash is not the hash of its nonce and balances';
  for (const step of leaf.path) node = step.side === 'left' ? parent(step, node) : parent(node, step);
  const root = proof.liabilities.root;
  if (node.hash !== root.hash || node.sums.join(',') !== root.sums.join(',')) return 'the path does not lead to the published root';
  return undefined;
}

// ---- signatures, one form per network ----
function witnessItems(base64) {
  const bytes = Buffer.from(base64, 'base64');
  let at = 0;
  const read = () => {
    const first = bytes[at++];
    if (first < 0xfd) return first;
    if (first === 0xfd) return bytes[at++] | (bytes[at++] << 8);
    throw new Error('witness too large');
  };
  const items = [];
  for (let n = read(); n > 0; n -= 1) {
    const length = read();
    items.push(Uint8Array.from(bytes.subarray(at, at + length)));
    at += length;
  }
  if (at !== bytes.length) throw new Error('trailing bytes after the witness');
  return items;
}

/** BIP-322 simple, P2WPKH: rebuild to_spend and to_sign, check the witness signature over BIP143's sighash. */
function verifyBip322(address, message, signature) {
  const decoded = bech32.decode(address);
  const program = bech32.fromWords(decoded.words.slice(1));
  if (decoded.words[0] !== 0 || program.length !== 20) return 'not a P2WPKH address';
  const [sig, publicKey] = witnessItems(signature);
  if (!sig || !publicKey || sig[sig.length - 1] !== 0x01) return 'not a P2WPKH witness with SIGHASH_ALL';
  if (!equal(hash160(publicKey), program)) return 'the witness key is not the address';
  const t = sha256(utf8ToBytes('BIP0322-signed-message'));
  const messageHash = sha256(concatBytes(t, t, utf8ToBytes(message)));
  const scriptPubKey = concatBytes(Uint8Array.of(0x00, 0x14), program);
  const toSpend = concatBytes(le32(0), varint(1), new Uint8Array(32), le32(0xffffffff), varint(34), Uint8Array.of(0x00, 0x20), messageHash, le32(0), varint(1), ZERO8, varint(scriptPubKey.length), scriptPubKey, le32(0));
  const outpoint = concatBytes(dsha(toSpend), le32(0));
  const scriptCode = concatBytes(Uint8Array.of(0x19, 0x76, 0xa9, 0x14), program, Uint8Array.of(0x88, 0xac));
  const outputs = concatBytes(ZERO8, varint(1), Uint8Array.of(0x6a));
  const preimage = concatBytes(le32(0), dsha(outpoint), dsha(le32(0)), outpoint, scriptCode, ZERO8, le32(0), dsha(outputs), le32(0), le32(1));
  return secp256k1.verify(sig.slice(0, -1), dsha(preimage), publicKey, { prehash: false, format: 'der' }) ? undefined : 'the signature does not verify';
}

function recoverKey(hash, r_s, recovery) {
  return secp256k1.Signature.fromBytes(concatBytes(Uint8Array.of(recovery), r_s), 'recovered').recoverPublicKey(hash).toBytes(false);
}

/** The legacy signed message (Dogecoin's P2PKH): recover the key from the compact signature, hash it to the address. */
function verifySignedMessage(address, message, signature, magic) {
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== 65) return 'not a compact signature';
  const header = bytes[0] - 27;
  const compressed = header >= 4;
  const body = utf8ToBytes(message);
  const m = utf8ToBytes(magic);
  const hash = dsha(concatBytes(varint(m.length), m, varint(body.length), body));
  const key = secp256k1.Point.fromBytes(recoverKey(hash, bytes.subarray(1), header & 3)).toBytes(compressed);
  const payload = base58check.decode(address);
  return equal(hash160(key), payload.subarray(1)) ? undefined : 'the signature is not by the address';
}

const prefixedKeccak = (prefix, message) => {
  const body = utf8ToBytes(message);
  return keccak_256(concatBytes(utf8ToBytes(`${prefix}${body.length}`), body));
};
function signerOf(prefix, message, signature) {
  const bytes = Buffer.from(signature.replace(/^0x/, ''), 'hex');
  if (bytes.length !== 65) throw new Error('not a 65-byte signature');
  const key = recoverKey(prefixedKeccak(prefix, message), bytes.subarray(0, 64), (bytes[64] >= 27 ? bytes[64] - 27 : bytes[64]) & 1);
  return keccak_256(key.subarray(1)).subarray(12);
}
const verifyEip191 = (address, message, signature) =>
  bytesToHex(signerOf('\x19Ethereum Signed Message:\n', message, signature)) === address.toLowerCase().replace(/^0x/, '') ? undefined : 'the signature is not by the address';
const verifyTron = (address, message, signature) =>
  equal(concatBytes(Uint8Array.of(0x41), signerOf('\x19TRON Signed Message:\n', message, signature)), base58check.decode(address)) ? undefined : 'the signature is not by the address';

/** TON: the wallet v4R2 (basechain) of the public key must be the address, and the key's signature the message's SHA-256. */
function verifyTon(address, message, signature, publicKey) {
  const key = Buffer.from(publicKey ?? '', 'hex');
  if (key.length !== 32) return 'no 32-byte public key';
  if (!WalletContractV4.create({ workchain: 0, publicKey: key }).address.equals(Address.parse(address))) return 'the public key is not the address (wallet v4R2)';
  return signVerify(Buffer.from(sha256(utf8ToBytes(message))), Buffer.from(signature, 'base64'), key) ? undefined : 'the signature does not verify';
}

export function checkSignature(message, entry) {
  const { address, proof } = entry;
  try {
    switch (proof?.type) {
      case 'bip322-simple':
        return verifyBip322(address, message, proof.signature);
      case 'bitcoin-signed-message':
        return verifySignedMessage(address, message, proof.signature, 'Dogecoin Signed Message:\n');
      case 'eip191':
        return verifyEip191(address, message, proof.signature);
      case 'tron-v2':
        return verifyTron(address, message, proof.signature);
      case 'ton-ed25519-sha256':
        return verifyTon(address, message, proof.signature, proof.publicKey);
      default:
        return `unknown signature type ${proof?.type}`;
    }
  } catch (error) {
    return `unreadable signature (${error.message})`;
  }
}

/** Every failure of the proof (and of the leaf, if given); an empty list when it all holds. */
export function verifyProof(proof, leaf) {
  const failures = [];
  if (proof.version !== 1) failures.push(`unknown version ${proof.version}`);
  const root = proof.liabilities?.root;
  if (!root || root.sums.length !== proof.assets.length) failures.push('the root has not one sum per asset');
  else {
    proof.assets.forEach((asset, i) => {
      if (proof.liabilities.totals[asset.currency] !== root.sums[i]) failures.push(`${asset.currency}: the total is not the root's sum`);
    });
    if (root.sums.some((s) => !/^\d+$/.test(s))) failures.push('the root has a negative sum');
  }
  if (!proof.message.includes(proof.id) || !proof.message.includes(root?.hash ?? '?')) failures.push('the message does not name the proof and its root');
  for (const network of proof.holdings) {
    for (const entry of network.addresses) {
      const failure = checkSignature(proof.message, entry);
      if (failure) failures.push(`${network.network} ${entry.address}: ${failure}`);
    }
  }
  if (leaf) {
    try {
      const failure = checkInclusion(proof, leaf);
      if (failure) failures.push(`your leaf: ${failure}`);
    } catch (error) {
      failures.push(`your leaf: ${error.message}`);
    }
  }
  return failures;
}

async function load(source) {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`${source}: HTTP ${response.status}`);
    return response.json();
  }
  return JSON.parse(await readFile(source, 'utf8'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [source, leafFile] = process.argv.slice(2);
  if (!source) {
    process.stderr.write('usage: node tools/verify-reserves.mjs <proof.json | URL> [my-leaf.json]\n');
    process.exit(2);
  }
  const proof = await load(source);
  const leaf = leafFile ? await load(leafFile) : undefined;
  const failures = verifyProof(proof, leaf);
  const addresses = proof.holdings.reduce((n, network) => n + network.addresses.length, 0);
  for (const failure of failures) process.stdout.write(`FAIL ${failure}\n`);
  if (failures.length === 0) {
    process.stdout.write(`ok: proof ${proof.id} of ${proof.asOf}, root ${proof.liabilities.root.hash}, ${proof.liabilities.leaves} users, ${addresses} address signatures${leaf ? ', your balances included' : ''}\n`);
    for (const asset of proof.assets) process.stdout.write(`  ${asset.currency}\tliabilities ${proof.liabilities.totals[asset.currency]}\theld ${proof.reserves?.[asset.currency] ?? 'n/a'}\n`);
  }
  process.exit(failures.length === 0 ? 0 : 1);
}
