/**
 * The custody's keys (port.ts WalletKeys): from the seed in the signer, from public keys everywhere else. The
 * account extended public keys (`xpub`) are what the signer hands out for every BIP32 path whose tail is not
 * hardened; TON's keys, hardened at every level, come one by one from the signer's pool (signer/pool.ts).
 */
import { HDKey } from '@scure/bip32';
import { deriveEd25519Path, keyPairFromSeed } from '@ton/crypto';
import type { Bip32Key, WalletKeys } from './port.ts';

/** Every key, private halves included: the signer's (and the tests' and the devnet faucet's). */
export function seedKeys(seed: Uint8Array, fingerprint = ''): WalletKeys {
  const root = HDKey.fromMasterSeed(seed);
  const cache = new Map<string, HDKey>();
  return {
    fingerprint,
    signing: true,
    derive(path) {
      let key = cache.get(path);
      if (!key) {
        key = root.derive(path);
        if (cache.size > 10_000) cache.clear();
        cache.set(path, key);
      }
      return key;
    },
    async ed25519(index) {
      return keyPairFromSeed(await deriveEd25519Path(Buffer.from(seed), [44, 607, index]));
    },
  };
}

/** The extended public key of each hardened account path (`m/84'/2'/0'`), as the signer records it. */
export function accountXpubs(seed: Uint8Array, accountPaths: readonly string[]): Record<string, string> {
  const root = HDKey.fromMasterSeed(seed);
  return Object.fromEntries(accountPaths.map((path) => [path, root.derive(path).publicExtendedKey]));
}

/**
 * Public keys only: a BIP32 path derives from the longest recorded account path it starts with (its tail must not
 * be hardened); `ed25519Public` answers TON's public keys (the signer's pool).
 */
export function publicKeys(record: { fingerprint: string; xpubs: Readonly<Record<string, string>> }, ed25519Public: (index: number) => Promise<Uint8Array>): WalletKeys {
  const accounts = Object.entries(record.xpubs)
    .map(([path, xpub]) => ({ path, key: HDKey.fromExtendedKey(xpub) }))
    .sort((a, b) => b.path.length - a.path.length);
  const cache = new Map<string, Bip32Key>();
  return {
    fingerprint: record.fingerprint,
    signing: false,
    derive(path) {
      const known = cache.get(path);
      if (known) return known;
      const account = accounts.find((a) => path === a.path || path.startsWith(`${a.path}/`));
      if (!account) throw new Error(`no extended public key covers ${path}: the signer records one per account path`);
      const tail = path.slice(account.path.length);
      if (tail.includes("'")) throw new Error(`${path} is hardened below its account: only the signer derives it`);
      const key = tail === '' ? account.key : account.key.derive(`m${tail}`);
      if (cache.size > 10_000) cache.clear();
      cache.set(path, key);
      return key;
    },
    async ed25519(index) {
      const publicKey = Buffer.from(await ed25519Public(index));
      return {
        publicKey,
        get secretKey(): Buffer {
          throw new Error('this process holds no private key: the signer signs');
        },
      };
    },
  };
}

/** An adapter's keys: `keys` where composition passes them, else every key of a bare `seed` (tests). */
export function keysOf(options: { keys?: WalletKeys | undefined; seed?: Uint8Array | undefined }): WalletKeys {
  if (options.keys) return options.keys;
  if (options.seed) return seedKeys(options.seed);
  throw new Error('a chain adapter needs the custody keys (or a seed)');
}
