/**
 * The wallet's HD seed: WALLET_SEED (a BIP39 mnemonic) where given, else, outside production, a development
 * mnemonic generated once into DATA_DIR (mode 0600) and reused by every process on that directory. The sealed file
 * and the command hook are in sealed-seed.ts, whose `openWalletSeed` picks the configured source.
 */
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { HDKey } from '@scure/bip32';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { WalletSeed } from './port.ts';

export const SEED_FILE = 'wallet-seed.txt';

/** A seed that cannot be used; its message names the variable or file to fix. */
export class SeedError extends Error {
  readonly code = 'SEED';
}

export function isValidMnemonic(mnemonic: string): boolean {
  return validateMnemonic(normalise(mnemonic), wordlist);
}

/** Lower case, single spaces, no surrounding space: the one form a mnemonic is sealed and checked in. */
export function normaliseMnemonic(mnemonic: string): string {
  return normalise(mnemonic);
}

/** Loads the seed; generates the development one on first start, loudly. */
export async function loadWalletSeed(options: { mnemonic: string | undefined; dataDir: string; production: boolean }, log: Logger): Promise<WalletSeed> {
  if (options.mnemonic) {
    const mnemonic = normalise(options.mnemonic);
    if (!validateMnemonic(mnemonic, wordlist)) throw new SeedError('WALLET_SEED is not a valid BIP39 English mnemonic');
    return seedFromMnemonic(mnemonic, 'env');
  }
  if (options.production) throw new SeedError('WALLET_SEED must be set in production (a BIP39 mnemonic from your key store), or WALLET_SEED_FILE or WALLET_SEED_COMMAND');
  const file = join(options.dataDir, SEED_FILE);
  let mnemonic = await readFile(file, 'utf8').then(normalise, () => undefined);
  if (mnemonic === undefined) {
    mnemonic = normalise(await createFileOnce(options.dataDir, file, `${generateMnemonic(wordlist, 256)}\n`));
    log.warn(
      { file },
      '!!! DEVELOPMENT WALLET SEED GENERATED: deposit addresses derive from a mnemonic kept in a plain file. Never use it for real money; set WALLET_SEED from a key store in production !!!',
    );
  } else {
    log.warn({ file }, 'using the development wallet seed from DATA_DIR: not for real money');
  }
  if (!validateMnemonic(mnemonic, wordlist)) throw new SeedError(`${file} does not hold a valid BIP39 mnemonic`);
  return seedFromMnemonic(mnemonic, 'file');
}

/**
 * Writes `content` to `file` (mode 0600) unless it exists, and returns what the file holds. Written beside and
 * hard-linked into place, so two processes starting together agree on one content.
 */
export async function createFileOnce(dataDir: string, file: string, content: string): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await chmod(temporary, 0o600);
  try {
    await link(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => {});
  }
  return readFile(file, 'utf8');
}

/** The seed of a valid mnemonic (anything else is a SeedError that does not repeat it). */
export function seedFromMnemonic(text: string, source: WalletSeed['source']): WalletSeed {
  const mnemonic = normalise(text);
  if (!validateMnemonic(mnemonic, wordlist)) throw new SeedError('the wallet seed is not a valid BIP39 English mnemonic');
  const bytes = mnemonicToSeedSync(mnemonic);
  const master = HDKey.fromMasterSeed(bytes).publicKey;
  if (!master) throw new SeedError('the seed gave no master key');
  return { bytes, fingerprint: Buffer.from(sha256(master)).toString('hex').slice(0, 16), source };
}

function normalise(mnemonic: string): string {
  return mnemonic.trim().toLowerCase().split(/\s+/).join(' ');
}
