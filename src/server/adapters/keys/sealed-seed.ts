/**
 * Where the wallet seed comes from: exactly one of WALLET_SEED (the mnemonic itself), WALLET_SEED_FILE (the mnemonic
 * sealed under a passphrase, given by WALLET_SEED_PASSPHRASE_FD or typed at a terminal) and WALLET_SEED_COMMAND (a
 * command whose standard output is the mnemonic, e.g. a secret store's client), else, outside production, the
 * development file in DATA_DIR. The mnemonic and the passphrase are never logged, returned or put in an error.
 *
 * The sealed file (version 1) is JSON: { format: "wallet-seed", version: 1, kdf: { name: "argon2id", memoryKiB,
 * passes, lanes, salt }, cipher: "aes-256-gcm", fingerprint, iv, sealed }. The key is argon2id of the passphrase
 * under the file's salt and parameters; `sealed` is the normalised mnemonic encrypted with it and its 16-byte tag,
 * authenticated together with every other field, so a changed parameter or fingerprint fails as a wrong passphrase.
 */
import { hashRaw, type Algorithm } from '@node-rs/argon2';
import { spawn } from 'node:child_process';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { Logger } from '../../log.ts';
import type { WalletSeed } from './port.ts';
import { isValidMnemonic, loadWalletSeed, normaliseMnemonic, seedFromMnemonic, SeedError } from './seed.ts';

export const SEALED_SEED_FORMAT = 'wallet-seed';
export const SEALED_SEED_VERSION = 1;
/** argon2id at 64 MiB and 3 passes: about a second to try one passphrase, on purpose. */
export const DEFAULT_SEED_KDF = { memoryKiB: 65_536, passes: 3, lanes: 1 } as const;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const COMMAND_TIMEOUT_MS = 60_000;

type KdfParameters = { memoryKiB: number; passes: number; lanes: number };
type SealedSeedFile = {
  format: typeof SEALED_SEED_FORMAT;
  version: typeof SEALED_SEED_VERSION;
  kdf: KdfParameters & { name: 'argon2id'; salt: string };
  cipher: 'aes-256-gcm';
  fingerprint: string;
  iv: string;
  sealed: string;
};

export type SeedSourceOptions = {
  mnemonic?: string | undefined;
  file?: string | undefined;
  passphraseFd?: number | undefined;
  command?: string | undefined;
  dataDir: string;
  production: boolean;
};

/** How a passphrase is asked for when no descriptor gives it; the terminal prompt unless a test passes its own. */
export type PassphraseSource = { prompt: (question: string) => Promise<string> };

/** The seed from whichever source is configured; exactly one may be. */
export async function openWalletSeed(options: SeedSourceOptions, log: Logger, io: PassphraseSource = { prompt: promptHidden }): Promise<WalletSeed> {
  const given = [options.mnemonic !== undefined && 'WALLET_SEED', options.file !== undefined && 'WALLET_SEED_FILE', options.command !== undefined && 'WALLET_SEED_COMMAND'].filter(Boolean);
  if (given.length > 1) throw new SeedError(`set only one of WALLET_SEED, WALLET_SEED_FILE and WALLET_SEED_COMMAND (${given.join(' and ')} are set)`);
  if (options.passphraseFd !== undefined && options.file === undefined) throw new SeedError('WALLET_SEED_PASSPHRASE_FD is set without WALLET_SEED_FILE: it gives the passphrase of that file');
  if (options.file !== undefined) {
    const passphrase = await readPassphrase(options.passphraseFd, io, `passphrase of the wallet seed (${options.file}): `);
    const seed = await openSealedSeedFile(options.file, passphrase);
    log.info({ file: options.file, fingerprint: seed.fingerprint }, 'wallet seed opened from its sealed file');
    return seed;
  }
  if (options.command !== undefined) {
    const seed = seedFromMnemonic(await runSeedCommand(options.command), 'command');
    log.info({ fingerprint: seed.fingerprint }, 'wallet seed read through WALLET_SEED_COMMAND');
    return seed;
  }
  return loadWalletSeed({ mnemonic: options.mnemonic, dataDir: options.dataDir, production: options.production }, log);
}

/** The sealed file's text for `mnemonic` under `passphrase`; `kdf` only to make tests fast. */
export async function sealSeed(mnemonic: string, passphrase: string, kdf: KdfParameters = DEFAULT_SEED_KDF): Promise<string> {
  const normalised = normaliseMnemonic(mnemonic);
  if (!isValidMnemonic(normalised)) throw new SeedError('the mnemonic is not a valid BIP39 English mnemonic');
  if (passphrase.length < 12) throw new SeedError('the passphrase must be at least 12 characters');
  const header = {
    format: SEALED_SEED_FORMAT,
    version: SEALED_SEED_VERSION,
    kdf: { name: 'argon2id', ...kdf, salt: randomBytes(16).toString('base64') },
    cipher: 'aes-256-gcm',
    fingerprint: seedFromMnemonic(normalised, 'sealed-file').fingerprint,
  } as const;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', await deriveKey(passphrase, header.kdf), iv).setAAD(additionalData(header));
  const body = Buffer.concat([cipher.update(normalised, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const file: SealedSeedFile = { ...header, iv: iv.toString('base64'), sealed: body.toString('base64') };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** Opens the sealed file's text; a wrong passphrase (or a changed file) is one SeedError, and nothing else is returned. */
export async function openSealedSeed(text: string, passphrase: string, where = 'WALLET_SEED_FILE'): Promise<WalletSeed> {
  const file = parseSealedSeed(text, where);
  const { iv, sealed, ...header } = file;
  const body = Buffer.from(sealed, 'base64');
  let mnemonic: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', await deriveKey(passphrase, file.kdf), Buffer.from(iv, 'base64')).setAAD(additionalData(header));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    mnemonic = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SeedError(`${where} does not open with this passphrase (a wrong passphrase, or the file was changed)`);
  }
  const seed = seedFromMnemonic(mnemonic, 'sealed-file');
  if (seed.fingerprint !== file.fingerprint) throw new SeedError(`${where} opened to a seed of another fingerprint than it names: the file was changed`);
  return seed;
}

export async function openSealedSeedFile(path: string, passphrase: string): Promise<WalletSeed> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new SeedError(`WALLET_SEED_FILE ${path} cannot be read (${error.code ?? 'error'})`);
  });
  return openSealedSeed(text, passphrase, `WALLET_SEED_FILE ${path}`);
}

/** Writes a new sealed file, mode 0600; an existing file is never overwritten. */
export async function writeSealedSeedFile(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    throw new SeedError(error.code === 'EEXIST' ? `${path} exists: a sealed seed is never overwritten, choose another path` : `${path} cannot be written (${error.code ?? 'error'})`);
  });
}

/** The passphrase: everything descriptor `fd` gives (one trailing newline dropped), else typed at the terminal. */
export async function readPassphrase(fd: number | undefined, io: PassphraseSource, question: string): Promise<string> {
  let passphrase: string;
  if (fd !== undefined) {
    try {
      passphrase = readFileSync(fd, 'utf8').replace(/\r?\n$/, '');
      closeSync(fd);
    } catch (error) {
      throw new SeedError(`WALLET_SEED_PASSPHRASE_FD ${fd} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): open it for the process, e.g. 3<passphrase-file`);
    }
  } else {
    passphrase = await io.prompt(question);
  }
  if (passphrase.length === 0) throw new SeedError('the wallet seed passphrase is empty');
  return passphrase;
}

/** Asks on the terminal with nothing echoed; no terminal is a SeedError saying how else to give it. */
export function promptHidden(question: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) return Promise.reject(new SeedError('the wallet seed passphrase is needed and there is no terminal to ask on: give it by WALLET_SEED_PASSPHRASE_FD'));
  return new Promise((resolve, reject) => {
    let typed = '';
    process.stderr.write(question);
    input.setRawMode(true);
    input.resume();
    const finish = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish();
        if (char === '\u0003') return finish(new SeedError('interrupted'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.on('data', onData);
  });
}

/**
 * The environment a secret store's client runs in: ours less every secret of ours (the signer's token, the database
 * address with its password, the secrets key, the seed's other sources, providers' keys); its own (VAULT_TOKEN, …) stay.
 */
export function seedCommandEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const ours = /^(WALLET_SEED.*|SIGNER_TOKEN|SECRETS_KEY.*|DATABASE_URL|TEST_DATABASE_URL|SMTP_URL|TELEGRAM_BOT_TOKEN|TELEGRAM_WEBHOOK_SECRET|.*_WEBHOOK_SECRET|.*_WEBHOOK_KEY|MOONPAY_.*|HEDGE_API_.*|.*_API_KEY|.*_RPC_URL|ANALYTICS_WRITE_KEY)$/;
  return Object.fromEntries(Object.entries(env).filter(([name]) => !ours.test(name)));
}

/** Runs WALLET_SEED_COMMAND with /bin/sh; its standard output is the mnemonic, its errors go to ours. */
export function runSeedCommand(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'pipe', 'inherit'], timeout: COMMAND_TIMEOUT_MS, env: seedCommandEnvironment(process.env) });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => reject(new SeedError(`WALLET_SEED_COMMAND could not run (${error.code ?? 'error'})`)));
    child.on('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8');
      chunks.fill(Buffer.alloc(0));
      if (code !== 0) return reject(new SeedError(`WALLET_SEED_COMMAND failed (${signal ? `killed by ${signal}` : `exit code ${code}`}); its output is not shown`));
      if (!isValidMnemonic(output)) return reject(new SeedError('WALLET_SEED_COMMAND printed no valid BIP39 English mnemonic; its output is not shown'));
      resolve(output);
    });
  });
}

function parseSealedSeed(text: string, where: string): SealedSeedFile {
  let file: Partial<SealedSeedFile>;
  try {
    file = JSON.parse(text) as Partial<SealedSeedFile>;
  } catch {
    throw new SeedError(`${where} is not a sealed wallet seed (not JSON): make it with npm run seed -- seal`);
  }
  if (file.format !== SEALED_SEED_FORMAT) throw new SeedError(`${where} is not a sealed wallet seed (format is not "${SEALED_SEED_FORMAT}")`);
  if (file.version !== SEALED_SEED_VERSION) throw new SeedError(`${where} is a sealed seed of version ${String(file.version)}; this version reads ${SEALED_SEED_VERSION}`);
  const kdf = file.kdf;
  const positive = (value: unknown, max: number) => Number.isInteger(value) && (value as number) > 0 && (value as number) <= max;
  if (
    kdf?.name !== 'argon2id' ||
    !positive(kdf.memoryKiB, 4_194_304) ||
    !positive(kdf.passes, 64) ||
    !positive(kdf.lanes, 16) ||
    typeof kdf.salt !== 'string' ||
    file.cipher !== 'aes-256-gcm' ||
    typeof file.fingerprint !== 'string' ||
    typeof file.iv !== 'string' ||
    typeof file.sealed !== 'string'
  ) {
    throw new SeedError(`${where} is damaged: its key derivation or cipher fields are missing or out of range`);
  }
  return file as SealedSeedFile;
}

function additionalData(header: Omit<SealedSeedFile, 'iv' | 'sealed'>): Buffer {
  const { format, version, kdf, cipher, fingerprint } = header;
  return Buffer.from(JSON.stringify([format, version, kdf.name, kdf.memoryKiB, kdf.passes, kdf.lanes, kdf.salt, cipher, fingerprint]), 'utf8');
}

function deriveKey(passphrase: string, kdf: KdfParameters & { salt: string }): Promise<Buffer> {
  // Algorithm is an ambient const enum (not importable as a value here); 2 is its Argon2id.
  return hashRaw(passphrase.normalize('NFKC'), { algorithm: 2 as Algorithm, memoryCost: kdf.memoryKiB, timeCost: kdf.passes, parallelism: kdf.lanes, outputLen: 32, salt: Buffer.from(kdf.salt, 'base64') });
}
