import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWalletSeed, SEED_FILE, SeedError } from '../../../../src/server/adapters/keys/seed.ts';
import { createLogger } from '../../../../src/server/log.ts';

const log = createLogger('silent');
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe('the wallet seed', () => {
  it('takes WALLET_SEED, whatever its spacing and case', async () => {
    const a = await loadWalletSeed({ mnemonic: MNEMONIC, dataDir: '/nonexistent', production: true }, log);
    const b = await loadWalletSeed({ mnemonic: `  ${MNEMONIC.toUpperCase().replaceAll(' ', '   ')}\n`, dataDir: '/nonexistent', production: true }, log);
    expect(a.source).toBe('env');
    expect(Buffer.from(a.bytes).toString('hex')).toBe(Buffer.from(b.bytes).toString('hex'));
    expect(a.fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });

  it('refuses a mnemonic with a bad checksum or unknown words, without echoing it', async () => {
    const bad = MNEMONIC.replace('about', 'abandon');
    await expect(loadWalletSeed({ mnemonic: bad, dataDir: '/nonexistent', production: false }, log)).rejects.toThrow(SeedError);
    await expect(loadWalletSeed({ mnemonic: bad, dataDir: '/nonexistent', production: false }, log)).rejects.not.toThrow(/abandon/);
  });

  it('is required in production', async () => {
    await expect(loadWalletSeed({ mnemonic: undefined, dataDir: '/nonexistent', production: true }, log)).rejects.toThrow(/WALLET_SEED must be set/);
  });

  it('is generated once into DATA_DIR with mode 0600, and the same for processes starting together', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'wallet-seed-'));
    const seeds = await Promise.all(Array.from({ length: 5 }, () => loadWalletSeed({ mnemonic: undefined, dataDir, production: false }, log)));
    expect(new Set(seeds.map((s) => s.fingerprint)).size).toBe(1);
    expect(seeds[0]?.source).toBe('file');
    const file = join(dataDir, SEED_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim().split(' ')).toHaveLength(24);
    const again = await loadWalletSeed({ mnemonic: undefined, dataDir, production: false }, log);
    expect(again.fingerprint).toBe(seeds[0]?.fingerprint);
  });

  it('refuses a damaged seed file rather than making a new one', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'wallet-seed-'));
    await writeFile(join(dataDir, SEED_FILE), 'not a mnemonic\n', { mode: 0o600 });
    await expect(loadWalletSeed({ mnemonic: undefined, dataDir, production: false }, log)).rejects.toThrow(/does not hold a valid BIP39 mnemonic/);
  });
});
