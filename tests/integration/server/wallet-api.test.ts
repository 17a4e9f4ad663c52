import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { launchServer } from '../../support/server.ts';
import { startInProcess, startProductionInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures, TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';
import { isValidAddress } from '../../../src/server/domain/addresses.ts';
import type { AssetItem } from '../../../src/server/domain/assets.ts';
import type { TransactionDetails, TransactionItem } from '../../../src/server/domain/history.ts';
import type { CoinMeta, FiatMeta } from '../../../src/lib/currencies.ts';

const ENV = { WALLET_SEED: TEST_MNEMONIC, DEVNET_BLOCK_MS: '100', CONFIRMATIONS: 'BITCOIN:15,ETHEREUM:3', WORKER_POLL_MS: '100', RATES_WALK_MS: '200' };
const PASSWORD = 'a long enough passphrase 42';

describe('the wallet API', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let alice: SignedInUser;
  let bob: SignedInUser;

  const call = gatewayClient<unknown>(() => server.url);
  const assets = async (user: SignedInUser) => (await call(user, 'GET', `/api/${user.accountId}/asset`)).body as AssetItem[];
  const history = async (user: SignedInUser, currency?: string) =>
    ((await call(user, 'POST', `/api/${user.accountId}/asset/transactions`, { account: user.accountId, currency, sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 }))
      .body as { result: TransactionItem[] }).result;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), ...ENV });
    alice = await signUpAndSignIn(server.url, { email: `alice-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    bob = await signUpAndSignIn(server.url, { email: `bob-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
  });
  afterAll(async () => {
    await server?.close();
    if (database) {
      const pool = new pg.Pool({ connectionString: database.url });
      try {
        expect(await auditFailures(pool)).toEqual([]);
      } finally {
        await pool.end();
      }
    }
    await database?.drop();
  });

  it('serves the catalogue publicly, with every coin field and BTC_LNG outside production', async () => {
    const coin = await call(undefined, 'GET', '/api/b2c-wallet/meta-info/coin');
    expect(coin.status).toBe(200);
    const { fiat, crypto } = coin.body as { fiat: FiatMeta[]; crypto: CoinMeta[] };
    expect(fiat.map((f) => f.currency)).toEqual(['USD', 'EUR', 'KZT', 'UAH', 'AZN', 'CAD', 'RUB']);
    expect(crypto.map((c) => c.currency)).toContain('BTC_LNG');
    const usdt = crypto.find((c) => c.currency === 'USDT_TRX');
    expect(usdt).toMatchObject({ name: expect.any(String), logoName: 'usdt', secondaryLogoName: 'trx', token: true, network: 'TRON', blockchain: 'Tron', baseCurrency: 'USDT', round: 2, crypto: true, active: true });
    expect(usdt?.urlScan).toBe(`${server.url.replace('127.0.0.1', 'localhost')}/sandbox/devnet/tx/{tx}`);
    expect(usdt?.implementations).toEqual([{ currency: 'USDT_TRX', network: 'TRON', token: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }]);
    expect((await call(undefined, 'GET', '/api/b2c-wallet/meta-info/currency')).body).toEqual(crypto);
    expect((await call(undefined, 'GET', '/api/fiat/metadata')).body).toEqual(fiat);
    const logo = await fetch(`${server.url}/coins/btc.svg`);
    expect(logo.status).toBe(200);
    expect(await logo.text()).toContain('<svg');
  });

  it('quotes rates per currency per fiat, and inverted, as decimal strings', async () => {
    const rates = await call(undefined, 'POST', '/api/rate', { currencies: ['BTC', 'USDT_TRX'], fiatCurrencies: ['USD', 'EUR'] });
    expect(rates.status).toBe(200);
    const map = (rates.body as { ratesMap: Record<string, Record<string, string>> }).ratesMap;
    expect(Object.keys(map)).toEqual(['BTC', 'USDT_TRX']);
    expect(map.BTC?.USD).toMatch(/^\d+(\.\d+)?$/);
    expect(Number(map.BTC?.USD)).toBeGreaterThan(50_000);
    const all = await call(undefined, 'POST', '/api/rate');
    expect(Object.keys((all.body as { ratesMap: object }).ratesMap)).toContain('TON');
    const inverted = await call(undefined, 'POST', '/api/fiat/rate/invert', { fiatCurrencies: ['USD'] });
    expect(Number((inverted.body as { ratesMap: Record<string, Record<string, string>> }).ratesMap.USD?.BTC)).toBeLessThan(0.0001);
    expect(await call(undefined, 'POST', '/api/rate', { currencies: ['NOPE'] })).toMatchObject({ status: 400, body: { exceptionCode: 'UNKNOWN_CURRENCY' } });
    expect(await call(undefined, 'POST', '/api/rate', { currencies: 'BTC' })).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await call(undefined, 'POST', '/api/rate', '{oops')).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
  });

  it('adds assets with deposit addresses of each network, tokens sharing their network address', async () => {
    expect(await assets(alice)).toEqual([]);
    const added = await call(alice, 'POST', `/api/${alice.accountId}/account/currency/list`, { currencies: ['BTC', 'ETH', 'USDT_TRX'] });
    expect(added.status).toBe(200);
    const list = await assets(alice);
    expect(list.map((a) => a.currency)).toEqual(['BTC', 'ETH', 'USDT_TRX']);
    const btc = list[0];
    expect(btc).toMatchObject({ currency: 'BTC', isCrypto: true, isToken: false, totalAvailable: '0', onHold: '0' });
    expect(btc?.depositAddress).toMatch(/^bc1q[02-9ac-hj-np-z]{38}$/);
    expect(isValidAddress('BITCOIN', btc?.depositAddress ?? '', 'mainnet')).toBe(true);
    expect(isValidAddress('ETHEREUM', list[1]?.depositAddress ?? '', 'mainnet')).toBe(true);
    expect(isValidAddress('TRON', list[2]?.depositAddress ?? '', 'mainnet')).toBe(true);
    expect(list[2]?.isToken).toBe(true);

    await call(alice, 'POST', `/api/${alice.accountId}/account/currency`, { currency: 'TRX' });
    const trx = (await assets(alice)).find((a) => a.currency === 'TRX');
    expect(trx?.depositAddress).toBe(list[2]?.depositAddress);
    const removed = await call(alice, 'DELETE', `/api/${alice.accountId}/account/currency/TRX`);
    expect(removed.status).toBe(200);
    expect((removed.body as AssetItem[]).map((a) => a.currency)).toEqual(['BTC', 'ETH', 'USDT_TRX']);
    // Re-adding brings the same address back.
    await call(alice, 'POST', `/api/${alice.accountId}/account/currency`, { currency: 'TRX' });
    expect((await assets(alice)).find((a) => a.currency === 'TRX')?.depositAddress).toBe(list[2]?.depositAddress);
    expect((await call(alice, 'DELETE', `/api/${alice.accountId}/account/currency/TRX`)).status).toBe(200);
    // Another user's addresses differ.
    await call(bob, 'POST', `/api/${bob.accountId}/account/currency`, { currency: 'BTC' });
    expect((await assets(bob))[0]?.depositAddress).not.toBe(btc?.depositAddress);
    // However many adds an account made, it holds one derivation index and the next account takes the next one, so a
    // standard wallet's gap limit finds every address on recovery (adds used to leave gaps).
    const pool = new pg.Pool({ connectionString: database.url });
    try {
      const keys = await pool.query<{ account: string; index: number }>(
        'SELECT wallet_account_id AS account, derivation_index AS index FROM wallet_account_keys WHERE wallet_account_id = ANY($1::uuid[])',
        [[alice.accountId, bob.accountId]],
      );
      const indexOf = (account: string) => keys.rows.find((row) => row.account === account)?.index;
      expect(indexOf(bob.accountId)).toBe((indexOf(alice.accountId) ?? -2) + 1);
    } finally {
      await pool.end();
    }
  });

  it("refuses another user's account with 403, and a missing token with 401", async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/${alice.accountId}/asset`],
      ['POST', `/api/${alice.accountId}/account/currency`, { currency: 'BTC' }],
      ['POST', `/api/${alice.accountId}/account/currency/list`, { currencies: ['BTC'] }],
      ['DELETE', `/api/${alice.accountId}/account/currency/BTC`],
      ['POST', `/api/${alice.accountId}/asset/transactions`, {}],
      ['GET', `/api/${alice.accountId}/asset/transaction/00000000-0000-4000-8000-000000000000?type=DEPOSIT`],
    ];
    for (const [method, path, body] of routes) {
      expect(await call(bob, method, path, body), `${method} ${path}`).toMatchObject({ status: 403, body: { exceptionCode: 'FORBIDDEN' } });
      expect((await call(undefined, method, path, body)).status, `${method} ${path}`).toBe(401);
    }
    expect(await call(bob, 'GET', '/api/00000000-0000-4000-8000-000000000000/asset')).toMatchObject({ status: 403, body: { exceptionCode: 'FORBIDDEN' } });
    // Account ids are UUIDs: anything else names no account route at all.
    expect(await call(bob, 'GET', '/api/not-an-account/asset')).toMatchObject({ status: 404, body: { exceptionCode: 'NOT_FOUND' } });
    expect((await assets(alice)).map((a) => a.currency)).toEqual(['BTC', 'ETH', 'USDT_TRX']);
  });

  it('answers bad inputs with 4xx and an exceptionCode', async () => {
    const a = `/api/${alice.accountId}`;
    const cases: [string, string, unknown, number, string][] = [
      ['POST', `${a}/account/currency`, {}, 400, 'VALIDATION'],
      ['POST', `${a}/account/currency`, { currency: 'XXX' }, 400, 'UNKNOWN_CURRENCY'],
      ['POST', `${a}/account/currency`, { currency: 'btc; drop table' }, 400, 'VALIDATION'],
      ['POST', `${a}/account/currency`, '{"currency":', 400, 'VALIDATION'],
      ['POST', `${a}/account/currency/list`, { currencies: [] }, 400, 'VALIDATION'],
      ['POST', `${a}/account/currency/list`, { currencies: ['BTC', 'NOPE'] }, 400, 'UNKNOWN_CURRENCY'],
      ['DELETE', `${a}/account/currency/LTC`, undefined, 404, 'ASSET_NOT_FOUND'],
      ['POST', `${a}/asset/transactions`, { pageSize: 1000 }, 400, 'VALIDATION'],
      ['POST', `${a}/asset/transactions`, { pageNumber: 0 }, 400, 'VALIDATION'],
      ['POST', `${a}/asset/transactions`, { sort: 'SIDEWAYS' }, 400, 'VALIDATION'],
      ['POST', `${a}/asset/transactions`, { properties: ['amount'] }, 400, 'VALIDATION'],
      ['POST', `${a}/asset/transactions`, { account: bob.accountId }, 400, 'VALIDATION'],
      ['POST', `${a}/asset/transactions`, { currency: 'NOPE' }, 400, 'UNKNOWN_CURRENCY'],
      ['GET', `${a}/asset/transaction/00000000-0000-4000-8000-000000000000?type=LOAN`, undefined, 400, 'VALIDATION'],
      ['GET', `${a}/asset/transaction/00000000-0000-4000-8000-000000000000`, undefined, 404, 'TRANSACTION_NOT_FOUND'],
      ['GET', `${a}/asset/transaction/abc`, undefined, 404, 'TRANSACTION_NOT_FOUND'],
      ['POST', '/sandbox/devnet/deposit', { currency: 'BTC', address: 'bc1qnope', amount: '1' }, 400, 'BAD_ADDRESS'],
      ['POST', '/sandbox/devnet/deposit', { currency: 'BTC', address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', amount: '1.123456789' }, 400, 'BAD_AMOUNT'],
      ['POST', '/sandbox/devnet/deposit', { currency: 'BTC' }, 400, 'VALIDATION'],
    ];
    for (const [method, path, body, status, code] of cases) {
      expect(await call(alice, method, path, body), `${method} ${path} ${JSON.stringify(body)}`).toMatchObject({ status, body: { exceptionCode: code } });
    }
  });

  it('shows a devnet deposit as Pending at once, then completed with its hash and explorer link', async () => {
    const address = (await assets(alice)).find((a) => a.currency === 'BTC')?.depositAddress ?? '';
    const sent = await call(undefined, 'POST', '/sandbox/devnet/deposit', { currency: 'BTC', address, amount: '0.01' });
    expect(sent.status).toBe(201);
    const { txHash } = sent.body as { txHash: string };
    const pending = await waitFor('the pending deposit', async () => (await history(alice, 'BTC')).find((t) => t.hash === txHash));
    expect(pending).toMatchObject({ state: 'IN_PROGRESS', direction: 'DEPOSIT', transactionType: 'DEPOSIT', amount: '0.01', currency: 'BTC', to: address, network: 'BITCOIN' });
    const done = await waitFor('the credit', async () => (await history(alice, 'BTC')).find((t) => t.hash === txHash && t.state === 'COMPLETED'));
    expect(done.completedDate).not.toBeNull();
    expect((await assets(alice)).find((a) => a.currency === 'BTC')?.totalAvailable).toBe('0.01');

    const details = await call(alice, 'GET', `/api/${alice.accountId}/asset/transaction/${done.id}?type=DEPOSIT`);
    expect(details.status).toBe(200);
    const detail = details.body as TransactionDetails;
    for (const field of ['id', 'currency', 'direction', 'transactionType', 'state', 'amount', 'fee', 'from', 'to', 'contact', 'hash', 'createdDate', 'accountFromType', 'accountToType', 'fromCurrency', 'toCurrency', 'fromAmount', 'toAmount', 'fiatCurrency', 'explorerUrl', 'network']) {
      expect(detail, field).toHaveProperty(field);
    }
    expect(detail).toMatchObject({ hash: txHash, confirmations: expect.any(Number), requiredConfirmations: 15, fee: '0', blockchain: 'Bitcoin' });
    expect(detail.explorerUrl).toContain(txHash);
    const explorer = await fetch(detail.explorerUrl?.replace(/^http:\/\/localhost:\d+/, server.url) ?? '');
    expect(await explorer.text()).toContain(txHash);
    expect((await call(alice, 'GET', `/api/${alice.accountId}/asset/transaction/${done.id}?type=WITHDRAWAL`)).status).toBe(404);
    expect(await history(alice, 'ETH')).toEqual([]);
  });

  it('credits each deposit once with a second server and its worker on the same database', async () => {
    // A process of its own (its worker races this one's on the database alone), on the same seed and secrets key.
    const second = await launchServer({ ...testServerEnv(database.url), ...ENV });
    try {
      const address = (await assets(bob)).find((a) => a.currency === 'BTC')?.depositAddress ?? '';
      for (let i = 0; i < 10; i++) {
        const target = i % 2 ? second.url : server.url;
        expect((await fetch(`${target}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency: 'BTC', address, amount: '0.1' }) })).status).toBe(201);
      }
      await waitFor('ten credits', async () => (await history(bob, 'BTC')).filter((t) => t.state === 'COMPLETED').length === 10);
      expect(await history(bob, 'BTC')).toHaveLength(10);
      expect((await assets(bob)).find((a) => a.currency === 'BTC')?.totalAvailable).toBe('1');
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  it('passes npm run ledger:audit, run beside the server with the same environment', async () => {
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, ['src/server/cli/ledger-audit.ts'], { env: { ...process.env, DATABASE_URL: database.url }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => resolve({ code, output }));
    });
    expect(result.output).toMatch(/ledger audit: \d+ passed, 0 failed/);
    expect(result.code).toBe(0);
  });
});

describe('the catalogue in production', () => {
  /** `npm run signer` apart, as production runs it: the only process given the seed. */
  const startSigner = async (env: Record<string, string>) => {
    let output = '';
    const child = spawn(process.execPath, ['src/server/signer/main.ts'], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { child, exited, output: () => output };
  };

  it('hides BTC_LNG and keeps everything else, with the seed in the signer alone', async () => {
    const database = await createTestDatabase(inject('adminDatabaseUrl'));
    try {
      const server = await startProductionInProcess({ DATABASE_URL: database.url, SECRETS_KEY: TEST_SECRETS_KEY, WALLET_SEED: TEST_MNEMONIC });
      try {
        const body = (await (await fetch(`${server.url}/api/b2c-wallet/meta-info/coin`)).json()) as { crypto: CoinMeta[] };
        expect(body.crypto.map((c) => c.currency)).toEqual(['BTC', 'ETH', 'USDT_ETH', 'USDC_ETH', 'TRX', 'USDT_TRX', 'LTC', 'DOGE', 'TON']);
      } finally {
        await server.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('refuses to start the signer in production without a seed, and the gateway without the signer\'s token', async () => {
    const database = await createTestDatabase(inject('adminDatabaseUrl'));
    const dir = await mkdtemp(join(tmpdir(), 'prod-signer-'));
    try {
      const signer = await startSigner({ DATABASE_URL: database.url, APP_ENV: 'production', SECRETS_KEY: TEST_SECRETS_KEY, SIGNER_TOKEN: 'p'.repeat(64), DATA_DIR: dir });
      expect(await signer.exited).not.toBe(0);
      expect(signer.output()).toMatch(/WALLET_SEED must be set in production/);
      await expect(launchServer({ DATABASE_URL: database.url, APP_ENV: 'production', WALLET_SEED: '', SECRETS_KEY: TEST_SECRETS_KEY, DATA_DIR: dir }, { waitMs: 20_000 })).rejects.toThrow(/SIGNER_TOKEN must be set in production/);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await database.drop();
    }
  });
});
