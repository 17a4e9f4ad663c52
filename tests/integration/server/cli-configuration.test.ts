import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, quietLog, TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import { openCustody } from '../../../src/server/custody.ts';
import { loadEnvironmentConfig, startFailure } from '../../../src/server/environment.ts';
import { custodyBalances } from '../../../src/server/domain/custody-balances.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { transfer } from '../../../src/server/domain/ledger-writes.ts';
import { formatUnits } from '../../../src/lib/amount.ts';
import { findCoin } from '../../../src/lib/currencies.ts';
import { unitsOf } from '../../../src/lib/money.ts';

/**
 * Issue 30 item 7: the commands read the configuration as the server does (ENV_FILE and the environment, one
 * loader), report the server's figures, refuse to report under settings the running server does not have, and
 * refuse what the server refuses with its words.
 */
const ROOT = new URL('../../../', import.meta.url).pathname;
type Run = { code: number | null; stdout: string; stderr: string };

/** A process with only the given environment (and PATH): nothing of the test runner's leaks into its configuration. */
function startNode(script: string, env: Record<string, string>, args: string[] = []): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, done: new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr }))) };
}
const runNode = (script: string, env: Record<string, string>, args: string[] = []) => startNode(script, env, args).done;

describe('the commands read the server configuration', () => {
  let testDatabase: TestDatabase;
  let fresh: TestDatabase;
  let database: Database;
  let dir: string;
  let serverFile: string;
  const serverEnv = (url: string) => [
    `DATABASE_URL=${url}`,
    `WALLET_SEED="${TEST_MNEMONIC}"`,
    `SECRETS_KEY=${TEST_SECRETS_KEY}`,
    'CONFIRMATIONS=BITCOIN:3,LITECOIN:7,ETHEREUM:5',
    'MIN_DEPOSIT=LTC:0.001',
    'DEVNET_BLOCK_MS=100',
    'RATES_WALK_MS=0',
  ];

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'), 'wallet_cli');
    fresh = await createTestDatabase(inject('adminDatabaseUrl'), 'wallet_cli_fresh');
    dir = await mkdtemp(join(tmpdir(), 'wallet-cli-'));
    serverFile = join(dir, 'wallet.env');
    await writeFile(serverFile, `# the server's settings\n${serverEnv(testDatabase.url).join('\n')}\nDATA_DIR=${dir}\n`);
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: dir }, quietLog);
    // The server side: the worker (`npm run worker`) starts on the file and records its settings.
    const worker = startNode('src/server/jobs/main.ts', { ENV_FILE: serverFile });
    try {
      await waitFor('the worker to record its settings', async () => (await database.pool.query(`SELECT 1 FROM app_setting WHERE key = 'server.settings'`)).rowCount === 1, 30_000);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
    await fresh?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reports the figures of the server composition when run on its ENV_FILE', async () => {
    const pool = database.pool;
    const alice = await ensureUserLedgerAccount(pool, (await createWalletAccount(pool)).accountId);
    await transfer(pool, { key: 'cli:deposit', kind: 'DEPOSIT', from: systemAccountId(SYSTEM_ACCOUNTS.world('LITECOIN')), to: alice, currency: 'LTC', amount: unitsOf(123_456_789n) });
    const config = loadEnvironmentConfig({ ENV_FILE: serverFile });
    expect(config.chains.confirmations).toEqual({ BITCOIN: 3, LITECOIN: 7, ETHEREUM: 5 });
    const custody = await openCustody(config, quietLog, pool, { owner: false });
    const rows = await custodyBalances(pool, custody.chain).finally(() => custody.close());

    const cli = await runNode('src/server/cli/custody.ts', { ENV_FILE: serverFile }, ['balances']);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const [header = [], ...lines] = cli.stdout.trim().split('\n').map((line) => line.split('\t'));
    const column = (name: string) => header.indexOf(name);
    const shown = (currency: string, units: bigint) => formatUnits(units, findCoin(currency)?.decimals ?? 0);
    expect(lines.map((cells) => ({ network: cells[column('NETWORK')], currency: cells[column('CURRENCY')], users: cells[column('USERS')], position: cells[column('POSITION')] }))).toEqual(
      rows.map((row) => ({ network: row.network, currency: row.currency, users: shown(row.currency, row.liability), position: shown(row.currency, row.position) })),
    );
    expect(lines.find((cells) => cells[column('CURRENCY')] === 'LTC')?.[column('USERS')]).toBe('1.23456789');

    // The same through the process environment instead of the file: the same loader, the same answer.
    const inline = Object.fromEntries(serverEnv(testDatabase.url).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1).replace(/^"|"$/g, '')]));
    const again = await runNode('src/server/cli/custody.ts', { ...inline, DATA_DIR: dir }, ['balances']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(cli.stdout);
  });

  it('refuses to report under other settings than the running server, naming them', async () => {
    const file = join(dir, 'partial.env');
    // The false MISMATCH of issue 30: the server's CONFIRMATIONS and MIN_DEPOSIT left out.
    await writeFile(file, `${serverEnv(testDatabase.url).filter((line) => !line.startsWith('CONFIRMATIONS=') && !line.startsWith('MIN_DEPOSIT=')).join('\n')}\nDATA_DIR=${dir}\n`);
    for (const [script, args] of [['src/server/cli/custody.ts', ['balances']], ['src/server/cli/devnet.ts', ['heights']]] as const) {
      const run = await runNode(script, { ENV_FILE: file }, [...args]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^the server runs with another CONFIRMATIONS, MIN_DEPOSIT than this command/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    // A variable of the process wins over the file: the operator can complete it on the command line.
    const completed = await runNode('src/server/cli/custody.ts', { ENV_FILE: file, CONFIRMATIONS: 'ETHEREUM:5,LITECOIN:7,BITCOIN:3', MIN_DEPOSIT: 'LTC:0.001' }, ['balances']);
    expect(completed.code).toBe(0);
  });

  it('refuses what the server refuses, with its words', async () => {
    // A setting loadConfig refuses: the server's start line and the command's line say the same.
    const standIn = { APP_ENV: 'production', CHAINS: 'devnet', DATABASE_URL: fresh.url };
    const server = await runNode('src/server/main.ts', standIn);
    expect(server.code).toBe(1);
    const reason = /^wallet: cannot start: (.+)\n$/.exec(server.stderr)?.[1];
    expect(reason).toMatch(/CHAINS=devnet is a development stand-in/);
    for (const [script, args] of [['src/server/cli/custody.ts', ['balances']], ['src/server/cli/ledger-audit.ts', []], ['src/server/jobs/main.ts', []]] as const) {
      const run = await runNode(script, standIn, [...args]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: `${reason}\n` });
    }
    const unreadable = await runNode('src/server/cli/custody.ts', { ENV_FILE: join(dir, 'missing.env') }, ['balances']);
    expect(unreadable).toMatchObject({ code: 1, stderr: `ENV_FILE names ${join(dir, 'missing.env')}, which cannot be read (ENOENT)\n` });

    // What the composition refuses (production without SECRETS_KEY): the server's composition, the worker and the command alike.
    const production = { APP_ENV: 'production', DATABASE_URL: fresh.url, WALLET_SEED: TEST_MNEMONIC, DATA_DIR: dir };
    const composed = await openDatabase({ databaseUrl: fresh.url, dataDir: dir }, quietLog);
    const refusal = await openCustody(loadEnvironmentConfig(production), quietLog, composed.pool).then(
      () => undefined,
      (error: unknown) => startFailure(error),
    );
    await composed.close();
    expect(refusal).toMatch(/^SECRETS_KEY must be set in production/);
    for (const script of ['src/server/cli/custody.ts', 'src/server/jobs/main.ts', 'src/server/cli/devnet.ts', 'src/server/cli/rotate-signing-key.ts']) {
      const run = await runNode(script, production, script.endsWith('custody.ts') ? ['balances'] : script.endsWith('devnet.ts') ? ['heights'] : []);
      if (script.endsWith('devnet.ts')) expect(run.stderr).toBe('CHAINS=off: there is no devnet to send to\n');
      else expect({ script, code: run.code, stderr: run.stderr }).toEqual({ script, code: 1, stderr: `${refusal}\n` });
    }
  }, 120_000);
});
