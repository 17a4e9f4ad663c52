/**
 * The keys as the domain, http and idp see them: the secrets key's operations, the sealed settings kept with it,
 * and the wallet seed. secrets-key.ts and seed.ts load and implement them; the composition root passes them in.
 */
import type { Network } from '../../../lib/currencies.ts';

export type SecretsKey = {
  /** Encrypts `plaintext`; `purpose` is bound to it, so a sealed value cannot be moved to another place. */
  seal: (plaintext: string, purpose: string) => string;
  /** Opens what this key or, during a rotation, a previous key (SECRETS_KEY_PREVIOUS) sealed. */
  open: (sealed: string, purpose: string) => string;
  /** Whether `sealed` is sealed under the current key (a re-seal leaves it as it is). */
  sealedWithCurrent: (sealed: string, purpose: string) => boolean;
  /** A one-way stand-in for `value` to store and look up by; the same value and purpose give the same hash. */
  keyedHash: (value: string, purpose: string) => string;
  /**
   * What to look `value` up by: its keyed hash under the current key, then under each previous key, as rows
   * written before a rotation keep theirs until they are rewritten or expire.
   */
  keyedHashes: (value: string, purpose: string) => string[];
  /** How every keyed hash starts, so rows written before keyed hashing can be told apart and migrated. */
  keyedHashPrefix: string;
  /** A public, non-secret fingerprint to tell keys apart in the database. */
  fingerprint: string;
  /** The fingerprints of SECRETS_KEY_PREVIOUS's keys: empty unless a rotation is under way. */
  previousFingerprints: string[];
  source: 'env' | 'file';
};

/** Values kept sealed with the secrets key in app_setting, one per name. */
export type SealedSettings = {
  /**
   * The value under `name`. Unset, `fresh` makes it once, whichever process comes first; a plaintext value from
   * before sealing (`parse` accepts it) is sealed in place. `parse` checks the value's shape.
   */
  load: <T>(name: string, options: { parse: (value: unknown) => T | undefined; fresh: () => T | Promise<T> }) => Promise<T>;
  /** Replaces the value under `name` (a rotation). */
  save: (name: string, value: unknown) => Promise<void>;
};

export type WalletSeed = {
  /** 64 bytes of BIP39 seed: only the key derivation sees it. */
  bytes: Uint8Array;
  /** A public, non-secret fingerprint (hash of the master public key) to tell seeds apart in the database. */
  fingerprint: string;
  /** WALLET_SEED, the development file, WALLET_SEED_FILE (sealed) or WALLET_SEED_COMMAND. */
  source: 'env' | 'file' | 'sealed-file' | 'command';
};

/**
 * The custody's keys as the chain adapters and the address rules use them. In the signer (the only process that
 * loads the seed) every key has its private half; in the gateway and the worker they are public only: secp256k1
 * keys derived from the account's extended public key (the path's hardened part is the account's), ed25519 (TON,
 * hardened at every level) from the public keys the signer recorded ahead of need. Asking a public-only key for
 * its private half throws.
 */
export type WalletKeys = {
  /** The seed's public fingerprint (WalletSeed.fingerprint). */
  readonly fingerprint: string;
  /** Whether these keys sign (the signer) or only show addresses (everyone else). */
  readonly signing: boolean;
  /** The secp256k1 key at a BIP32 path from the master (`m/84'/2'/0'/0/7`): `privateKey` null where not signing. */
  derive(path: string): Bip32Key;
  /** TON's ed25519 key pair of derivation `index` (SLIP-10 `m/44'/607'/index'`); `secretKey` throws where not signing. */
  ed25519(index: number): Promise<{ publicKey: Buffer; secretKey: Buffer }>;
};

/** What the adapters use of a BIP32 node (@scure/bip32's HDKey is one). */
export type Bip32Key = {
  readonly publicKey: Uint8Array | null;
  readonly privateKey: Uint8Array | null;
  sign(hash: Uint8Array): Uint8Array;
  verify(hash: Uint8Array, signature: Uint8Array): boolean;
};

/** The proof of reserves' signature of one address (reserve-signer.ts; README "Proof of reserves"). */
export type ReserveSignature = { type: 'bip322-simple' | 'bitcoin-signed-message' | 'eip191' | 'tron-v2' | 'ton-ed25519-sha256'; signature: string; publicKey?: string | undefined };

/** Which key signs: its BIP32 `path` (secp256k1 networks) or, for TON, its SLIP-10 path m/44'/607'/index'. */
export type ReserveKey = { network: Network; path: string };

/** Signs a proof of reserves' message with the key of one custody address. */
export type ReserveSigner = (key: ReserveKey, message: string) => Promise<ReserveSignature>;
