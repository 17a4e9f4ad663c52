import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openSealedSeed, openWalletSeed, sealSeed, seedCommandEnvironment } from '../../../../src/server/adapters/keys/sealed-seed.ts';
import { loadWalletSeed, SeedError } from '../../../../src/server/adapters/keys/seed.ts';

const MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const WORDS = ['legal', 'winner', 'sausage', 'yellow'];
const PASSPHRASE = 'correct horse battery staple';
const FAST = { memoryKiB: 1024, passes: 1, lanes: 1 };
const ROOT = join(import.meta.dirname, '../../../..');

/** A logger whose every line is kept, at the most verbose level. */
function capturedLog() {
  const lines: string[] = [];
  const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
  return { log, text: () => lines.join('') };
}

const noPrompt = { prompt: () => Promise.reject(new Error('no prompt expected')) };

async function sealedFile(dir: string, passphrase = PASSPHRASE): Promise<string> {
  const file = join(dir, 'seed.sealed');
  await writeFile(file, await sealSeed(MNEMONIC, passphrase, FAST), { mode: 0o600 });
  return file;
}

describe('the sealed wallet seed (issue 31 item 2)', () => {
  it('opens with the right passphrase only, to the same seed as the mnemonic, and the file holds no word of it', async () => {
    const text = await sealSeed(MNEMONIC, PASSPHRASE, FAST);
    const plain = await loadWalletSeed({ mnemonic: MNEMONIC, dataDir: '/nonexistent', production: true }, pino({ level: 'silent' }));
    const file = JSON.parse(text) as Record<string, unknown>;
    expect(file).toMatchObject({ format: 'wallet-seed', version: 1, kdf: { name: 'argon2id', memoryKiB: 1024, passes: 1, lanes: 1 }, cipher: 'aes-256-gcm', fingerprint: plain.fingerprint });
    for (const word of WORDS) expect(text).not.toContain(word);

    const opened = await openSealedSeed(text, PASSPHRASE);
    expect(Buffer.from(opened.bytes).equals(Buffer.from(plain.bytes))).toBe(true);
    expect(opened.source).toBe('sealed-file');

    const wrong = openSealedSeed(text, `${PASSPHRASE}!`);
    await expect(wrong).rejects.toThrow(SeedError);
    await expect(openSealedSeed(text, 'another passphrase')).rejects.toThrow(/does not open with this passphrase/);
    // A weakened key derivation is not accepted: the parameters are authenticated with the mnemonic.
    const weakened = JSON.stringify({ ...file, kdf: { ...(file.kdf as object), passes: 2 } });
    await expect(openSealedSeed(weakened, PASSPHRASE)).rejects.toThrow(/does not open/);
    await expect(openSealedSeed(JSON.stringify({ ...file, version: 2 }), PASSPHRASE)).rejects.toThrow(/version 2/);
    await expect(sealSeed(MNEMONIC.replace('yellow', 'legal'), PASSPHRASE, FAST)).rejects.toThrow(/not a valid BIP39/);
  });

  it('reads the passphrase from WALLET_SEED_PASSPHRASE_FD and never logs the mnemonic or the passphrase', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sealed-seed-'));
    const file = await sealedFile(dir);
    await writeFile(join(dir, 'passphrase'), `${PASSPHRASE}\n`);
    const { log, text } = capturedLog();
    const seed = await openWalletSeed({ file, passphraseFd: openSync(join(dir, 'passphrase'), 'r'), dataDir: dir, production: true }, log, noPrompt);
    expect(seed.source).toBe('sealed-file');
    expect(text()).toContain(seed.fingerprint);
    for (const secret of [...WORDS, PASSPHRASE]) expect(text()).not.toContain(secret);

    // A wrong passphrase by the descriptor: one clear error, no seed, nothing of either in the error or the log.
    await writeFile(join(dir, 'wrong'), 'not the passphrase at all\n');
    const failure = await openWalletSeed({ file, passphraseFd: openSync(join(dir, 'wrong'), 'r'), dataDir: dir, production: true }, log, noPrompt).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SeedError);
    expect(String(failure)).toMatch(/WALLET_SEED_FILE .* does not open with this passphrase/);
    for (const secret of [...WORDS, 'not the passphrase']) expect(`${String(failure)}${text()}`).not.toContain(secret);
  });

  it('asks at the prompt when no descriptor is given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sealed-seed-'));
    const file = await sealedFile(dir);
    const questions: string[] = [];
    const seed = await openWalletSeed({ file, dataDir: dir, production: true }, pino({ level: 'silent' }), { prompt: async (question) => (questions.push(question), PASSPHRASE) });
    expect(seed.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(questions).toHaveLength(1);
  });

  it('reads the mnemonic from WALLET_SEED_COMMAND, and shows nothing of a failing command', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sealed-seed-'));
    await writeFile(join(dir, 'vault'), `${MNEMONIC}\n`, { mode: 0o600 });
    const { log, text } = capturedLog();
    const seed = await openWalletSeed({ command: `cat '${join(dir, 'vault')}'`, dataDir: dir, production: true }, log, noPrompt);
    const plain = await loadWalletSeed({ mnemonic: MNEMONIC, dataDir: dir, production: true }, pino({ level: 'silent' }));
    expect(seed.fingerprint).toBe(plain.fingerprint);
    expect(seed.source).toBe('command');
    for (const word of WORDS) expect(text()).not.toContain(word);

    await expect(openWalletSeed({ command: 'echo sausage-secret; exit 3', dataDir: dir, production: true }, log, noPrompt)).rejects.toThrow(/WALLET_SEED_COMMAND failed \(exit code 3\); its output is not shown/);
    const bad = await openWalletSeed({ command: `echo '${MNEMONIC.replace('yellow', 'legal')}'`, dataDir: dir, production: true }, log, noPrompt).catch((error: unknown) => String(error));
    expect(bad).toMatch(/printed no valid BIP39/);
    for (const word of WORDS) expect(bad).not.toContain(word);
  });

  it('takes exactly one source, and one in production', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sealed-seed-'));
    const log = pino({ level: 'silent' });
    await expect(openWalletSeed({ mnemonic: MNEMONIC, command: 'true', dataDir: dir, production: false }, log, noPrompt)).rejects.toThrow(/set only one of WALLET_SEED, WALLET_SEED_FILE and WALLET_SEED_COMMAND \(WALLET_SEED and WALLET_SEED_COMMAND are set\)/);
    await expect(openWalletSeed({ mnemonic: MNEMONIC, passphraseFd: 0, dataDir: dir, production: false }, log, noPrompt)).rejects.toThrow(/WALLET_SEED_PASSPHRASE_FD is set without WALLET_SEED_FILE/);
    await expect(openWalletSeed({ dataDir: dir, production: true }, log, noPrompt)).rejects.toThrow(/WALLET_SEED must be set in production .*WALLET_SEED_FILE or WALLET_SEED_COMMAND/);
    await expect(openWalletSeed({ file: join(dir, 'missing'), passphraseFd: openSync('/dev/null', 'r'), dataDir: dir, production: true }, log, noPrompt)).rejects.toThrow(/passphrase is empty/);
    expect((await openWalletSeed({ dataDir: dir, production: false }, log, noPrompt)).source).toBe('file');
  });

  it('npm run seed -- seal writes the file from standard input (never argv), and check opens it with the right passphrase only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sealed-seed-'));
    const file = join(dir, 'wallet.seed');
    const run = (args: string[], input: string, passphrase: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['src/server/cli/seed.ts', ...args], { cwd: ROOT, env: { ...process.env, WALLET_SEED_PASSPHRASE_FD: '3' }, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        // The child may close either pipe early (a usage error, the descriptor read and closed): not this test's failure.
        child.stdin?.on('error', () => {}).end(input);
        (child.stdio[3] as NodeJS.WritableStream).on('error', () => {}).end(`${passphrase}\n`);
      });
    const sealed = await run(['seal', file], `${MNEMONIC}\n`, PASSPHRASE);
    expect(sealed.stderr).toBe('');
    expect(sealed.code).toBe(0);
    expect(sealed.stdout).toMatch(/^sealed into .* \(opens; fingerprint [0-9a-f]{16}\)/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = await readFile(file, 'utf8');
    for (const word of WORDS) expect(stored).not.toContain(word);

    const again = await run(['seal', file], `${MNEMONIC}\n`, PASSPHRASE);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists: a sealed seed is never overwritten/);
    expect(await readFile(file, 'utf8')).toBe(stored);

    const fingerprint = /fingerprint ([0-9a-f]{16})/.exec(sealed.stdout)?.[1];
    const check = await run(['check', file], '', PASSPHRASE);
    expect(check).toMatchObject({ code: 0, stdout: `${file} opens: fingerprint ${fingerprint}\n` });
    const wrong = await run(['check', file], '', 'a wrong passphrase');
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toMatch(/does not open with this passphrase/);
    const usage = await run(['seal'], MNEMONIC, PASSPHRASE);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/^usage:/);
  }, 90_000);
});

describe('the secret store command\'s environment', () => {
  it('keeps the store client\'s own variables and none of ours', () => {
    const env = seedCommandEnvironment({ PATH: '/bin', HOME: '/root', VAULT_TOKEN: 'v', VAULT_ADDR: 'https://vault', SIGNER_TOKEN: 's', DATABASE_URL: 'postgres://u:p@h/db', SECRETS_KEY: 'k', SECRETS_KEY_PREVIOUS: 'k0', WALLET_SEED_COMMAND: 'c', CARD_WEBHOOK_SECRET: 'w', MOONPAY_SECRET_KEY: 'm', LITECOIN_RPC_URL: 'http://u:p@n' });
    expect(env).toEqual({ PATH: '/bin', HOME: '/root', VAULT_TOKEN: 'v', VAULT_ADDR: 'https://vault' });
  });
});
