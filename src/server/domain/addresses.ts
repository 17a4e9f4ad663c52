/**
 * Deposit addresses derived from the custody's keys (WalletKeys: public ones are enough) with each chain's own libraries, and the server's address check
 * (checksums: bech32, base58check, EIP-55, TON CRC16) on top of the browser's shapes in src/lib/address.ts.
 */
import { HDKey } from '@scure/bip32';
import { deriveEd25519Path, keyPairFromSeed } from '@ton/crypto';
import { Address as BitcoinAddress, NETWORK as BITCOIN_MAIN, p2pkh, p2wpkh } from '@scure/btc-signer';
import { createBase58check } from '@scure/base';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { Address as TonAddress } from '@ton/core';
import { WalletContractV4 } from '@ton/ton';
import { isAddressShapeValid } from '../../lib/address.ts';
import type { ChainEnv, Network } from '../../lib/currencies.ts';
import type { ChainAddressing, UtxoNetwork } from '../adapters/chains/port.ts';
import type { WalletKeys } from '../adapters/keys/port.ts';

type BTC_NETWORK = typeof BITCOIN_MAIN;

/**
 * Address parameters per CHAIN_ENV (the nodes' chainparams): bech32 human-readable part, base58 version bytes and WIF.
 * Litecoin's script addresses are its own M/Q forms (0x32/0x3a), not Bitcoin's 3/2. Dogecoin has no segwit: its
 * bech32 part is never produced and only keeps the type complete. Dogecoin regtest is Dogecoin Core 1.14's 0x6f.
 */
const UTXO_PARAMS: Record<ChainEnv, Record<UtxoNetwork, BTC_NETWORK>> = {
  mainnet: {
    BITCOIN: BITCOIN_MAIN,
    LITECOIN: { bech32: 'ltc', pubKeyHash: 0x30, scriptHash: 0x32, wif: 0xb0 },
    DOGECOIN: { bech32: 'doge', pubKeyHash: 0x1e, scriptHash: 0x16, wif: 0x9e },
  },
  testnet: {
    BITCOIN: { bech32: 'tb', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
    LITECOIN: { bech32: 'tltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef },
    DOGECOIN: { bech32: 'tdge', pubKeyHash: 0x71, scriptHash: 0xc4, wif: 0xf1 },
  },
  regtest: {
    BITCOIN: { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
    LITECOIN: { bech32: 'rltc', pubKeyHash: 0x6f, scriptHash: 0x3a, wif: 0xef },
    DOGECOIN: { bech32: 'dcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef },
  },
};
/** Dogecoin Core's development branch gives regtest testnet's 0x71: its addresses are accepted on regtest too. */
const DOGECOIN_REGTEST_NEXT: BTC_NETWORK = { ...UTXO_PARAMS.testnet.DOGECOIN, bech32: 'dcrt' };
const TRON_PREFIX = 0x41;
const base58check = createBase58check(sha256);

/** The custody's address rules under CHAIN_ENV `env`: what composition hands to the adapters and the domain. */
export function chainAddressing(env: ChainEnv): ChainAddressing {
  return {
    derive: (keys, network, index) => deriveAddress(keys, network, index, env),
    isValid: (network, address) => isValidAddress(network, address, env),
    path: (network, index) => derivationPath(network, index, env),
    utxoParams: (network) => UTXO_PARAMS[env][network],
  };
}

/**
 * BIP32 paths per network; the last number is the account's derivation index. TON is SLIP-10 ed25519 (all
 * hardened). On testnet and regtest the UTXO networks use SLIP-44's coin type 1 (every test network), as Bitcoin
 * Core, Electrum and Sparrow do there; Ethereum, TRON and TON keep theirs (their wallets use one path everywhere).
 */
export function derivationPath(network: Network, index: number, env: ChainEnv): string {
  const test = env !== 'mainnet';
  switch (network) {
    case 'BITCOIN':
      return `m/84'/${test ? 1 : 0}'/0'/0/${index}`;
    case 'LITECOIN':
      return `m/84'/${test ? 1 : 2}'/0'/0/${index}`;
    case 'DOGECOIN':
      return `m/44'/${test ? 1 : 3}'/0'/0/${index}`;
    case 'ETHEREUM':
      return `m/44'/60'/0'/0/${index}`;
    case 'TRON':
      return `m/44'/195'/0'/0/${index}`;
    case 'TON':
      return `m/44'/607'/${index}'`;
  }
}

/**
 * The hardened account paths under CHAIN_ENV whose extended public keys derive every address of the BIP32 networks
 * (deposit, change, hot wallet: their tails are not hardened). TON has none: every level of its path is hardened.
 */
export function accountPaths(env: ChainEnv): string[] {
  const paths = (['BITCOIN', 'LITECOIN', 'DOGECOIN', 'ETHEREUM', 'TRON'] as const).map((network) => {
    const path = derivationPath(network, 0, env);
    return path.slice(0, path.lastIndexOf("'") + 1);
  });
  return [...new Set(paths)];
}

/** The deposit address of derivation `index` on `network` under the wallet's keys (public ones are enough). */
export async function deriveAddress(source: WalletKeys | Uint8Array, network: Network, index: number, env: ChainEnv): Promise<string> {
  if (!Number.isInteger(index) || index < 0 || index >= 0x80000000) throw new RangeError(`bad derivation index ${index}`);
  const keys = source instanceof Uint8Array ? fromSeed(source) : source;
  if (network === 'TON') {
    const { publicKey } = await keys.ed25519(index);
    // A standard wallet v4R2 on the basechain; shown non-bounceable, as wallets show deposit addresses (test-only off mainnet).
    return WalletContractV4.create({ workchain: 0, publicKey }).address.toString({ bounceable: false, urlSafe: true, testOnly: env !== 'mainnet' });
  }
  const publicKey = keys.derive(derivationPath(network, index, env)).publicKey;
  if (!publicKey) throw new Error('derivation gave no public key');
  return publicKeyAddress(network, publicKey, env);
}

/**
 * The address of receiving index `index` (`<account>/0/index`) under an account's extended public key (xpub, tpub,
 * zpub, Ltub…: any version bytes; the address type is the network's own, P2WPKH or P2PKH): the operator's cold wallet,
 * watch-only. An extended private key is refused: the custody must never hold the cold keys.
 */
export function extendedKeyAddress(extendedKey: string, network: Exclude<Network, 'TON'>, index: number, env: ChainEnv): string {
  const decoded = base58check.decode(extendedKey);
  if (decoded.length !== 78) throw new Error('not an extended public key');
  const version = new DataView(decoded.buffer, decoded.byteOffset).getUint32(0);
  const account = HDKey.fromExtendedKey(extendedKey, { public: version, private: version ^ 1 });
  if (account.privateKey) throw new Error('an extended private key: give the cold wallet’s extended public key');
  const publicKey = account.deriveChild(0).deriveChild(index).publicKey;
  if (!publicKey) throw new Error('derivation gave no public key');
  return publicKeyAddress(network, publicKey, env);
}

/** The address of a secp256k1 public key on `network` (the deposit formats: P2WPKH, P2PKH, EIP-55, TRON base58). */
function publicKeyAddress(network: Exclude<Network, 'TON'>, publicKey: Uint8Array, env: ChainEnv): string {
  switch (network) {
    case 'BITCOIN':
    case 'LITECOIN':
      return required(p2wpkh(publicKey, UTXO_PARAMS[env][network]).address);
    case 'DOGECOIN':
      return required(p2pkh(publicKey, UTXO_PARAMS[env].DOGECOIN).address);
    case 'ETHEREUM':
      return toChecksumAddress(bytesToHex(ethereumAccount(publicKey)));
    case 'TRON': {
      const body = new Uint8Array(21);
      body[0] = TRON_PREFIX;
      body.set(ethereumAccount(publicKey), 1);
      return base58check.encode(body);
    }
  }
}

/** A bare BIP39 seed (tests, the devnet's faucet) as keys that derive addresses. */
function fromSeed(seed: Uint8Array): Pick<WalletKeys, 'derive' | 'ed25519'> {
  return {
    derive: (path) => HDKey.fromMasterSeed(seed).derive(path),
    ed25519: async (index) => keyPairFromSeed(await deriveEd25519Path(Buffer.from(seed), [44, 607, index])),
  };
}

/** Does the address exist on `network` under `env`: the right shape and, where the format has one, a valid checksum. */
export function isValidAddress(network: Network, address: string, env: ChainEnv): boolean {
  if (!isAddressShapeValid(network, address, env)) return false;
  try {
    switch (network) {
      case 'BITCOIN':
      case 'LITECOIN':
        BitcoinAddress(UTXO_PARAMS[env][network]).decode(address);
        return true;
      case 'DOGECOIN':
        return decodes(UTXO_PARAMS[env].DOGECOIN, address) || (env === 'regtest' && decodes(DOGECOIN_REGTEST_NEXT, address));
      case 'ETHEREUM': {
        const hex = address.slice(2);
        // EIP-55: an all-lower or all-upper address carries no checksum; a mixed-case one must match it.
        if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
        return toChecksumAddress(hex.toLowerCase()) === address;
      }
      case 'TRON': {
        const body = base58check.decode(address);
        return body.length === 21 && body[0] === TRON_PREFIX;
      }
      case 'TON':
        // Friendly forms carry a CRC16 that parsing verifies; the raw form has none. Test-only exactly off mainnet.
        if (TonAddress.isRaw(address)) return TonAddress.parseRaw(address).workChain === 0 || TonAddress.parseRaw(address).workChain === -1;
        return TonAddress.isFriendly(address) && TonAddress.parseFriendly(address).isTestOnly === (env !== 'mainnet');
    }
  } catch {
    return false;
  }
}

function decodes(params: BTC_NETWORK, address: string): boolean {
  try {
    BitcoinAddress(params).decode(address);
    return true;
  } catch {
    return false;
  }
}

/** The last 20 bytes of keccak256 of the uncompressed public key without its 0x04 prefix. */
function ethereumAccount(compressedPublicKey: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.Point.fromBytes(compressedPublicKey).toBytes(false);
  return keccak_256(uncompressed.subarray(1)).subarray(12);
}

/** EIP-55 mixed-case checksum of a lower-case hex account (40 characters, no 0x). */
export function toChecksumAddress(lowerHex: string): string {
  const hash = bytesToHex(keccak_256(new TextEncoder().encode(lowerHex)));
  let out = '0x';
  for (let i = 0; i < lowerHex.length; i++) {
    const char = lowerHex[i] ?? '';
    out += parseInt(hash[i] ?? '0', 16) >= 8 ? char.toUpperCase() : char;
  }
  return out;
}

function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function required(address: string | undefined): string {
  if (!address) throw new Error('the chain library produced no address');
  return address;
}
