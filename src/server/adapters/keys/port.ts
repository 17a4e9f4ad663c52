/**
 * The keys as the domain, http and idp see them: the secrets key's operations, the sealed settings kept with it,
 * and the wallet seed. secrets-key.ts and seed.ts load and implement them; the composition root passes them in.
 */

export type SecretsKey = {
  /** Encrypts `plaintext`; `purpose` is bound to it, so a sealed value cannot be moved to another place. */
  seal: (plaintext: string, purpose: string) => string;
  open: (sealed: string, purpose: string) => string;
  /** A one-way stand-in for `value` to store and look up by; the same value and purpose give the same hash. */
  keyedHash: (value: string, purpose: string) => string;
  /** How every keyed hash starts, so rows written before keyed hashing can be told apart and migrated. */
  keyedHashPrefix: string;
  /** A public, non-secret fingerprint to tell keys apart in the database. */
  fingerprint: string;
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
  source: 'env' | 'file';
};
