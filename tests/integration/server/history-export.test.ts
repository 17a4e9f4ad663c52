import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { TEST_MNEMONIC, waitFor } from '../../support/custody.ts';
import { formatUnits } from '../../../src/lib/amount.ts';
import { CSV_HEADER } from '../../../src/server/domain/history-export.ts';

const ENV = { WALLET_SEED: TEST_MNEMONIC, DEVNET_BLOCK_MS: '100', CONFIRMATIONS: 'BITCOIN:2', WORKER_POLL_MS: '100', RATES_WALK_MS: '0' };
const PASSWORD = 'a long enough passphrase 42';

/** A CSV as the export writes it (RFC 4180: quoted fields may hold commas and doubled quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    }
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}

describe('the history as CSV (issue 36 item 4)', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let alice: SignedInUser;
  let bob: SignedInUser;
  let pool: pg.Pool;

  const post = (user: SignedInUser, path: string, body: unknown) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${user.accessToken}` }, body: JSON.stringify(body) });
  const linkFor = async (user: SignedInUser, body: { currency?: string; from: string; to: string }) => {
    const response = await post(user, `/api/${user.accountId}/asset/transactions/export`, body);
    expect(response.status).toBe(200);
    return ((await response.json()) as { url: string }).url;
  };
  const download = async (url: string) => {
    const response = await fetch(`${server.url}${url}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="history-/);
    return parseCsv(await response.text());
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), ...ENV });
    alice = await signUpAndSignIn(server.url, { email: `alice-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    bob = await signUpAndSignIn(server.url, { email: `bob-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
    await database?.drop();
  });

  it('exports a credited devnet deposit with its UTC date, exact amount, hash and address', async () => {
    await post(alice, `/api/${alice.accountId}/account/currency`, { currency: 'BTC' });
    const assets = (await (await fetch(`${server.url}/api/${alice.accountId}/asset`, { headers: { authorization: `Bearer ${alice.accessToken}` } })).json()) as Array<{ currency: string; depositAddress: string }>;
    const address = assets.find((a) => a.currency === 'BTC')?.depositAddress ?? '';
    const sent = await fetch(`${server.url}/sandbox/devnet/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ currency: 'BTC', address, amount: '0.0123' }) });
    const { txHash } = (await sent.json()) as { txHash: string };
    await waitFor('the credit', async () => (await pool.query(`SELECT 1 FROM wallet_transactions WHERE hash = $1 AND state = 'COMPLETED'`, [txHash])).rowCount === 1).catch(async (error: unknown) => {
      throw new Error(`${String(error)}: ${sent.status} ${txHash} ${JSON.stringify((await pool.query('SELECT state, hash, currency FROM wallet_transactions')).rows.slice(0, 3))}`);
    });
    const today = new Date().toISOString().slice(0, 10);
    const [header, ...rows] = await download(await linkFor(alice, { currency: 'BTC', from: today, to: today }));
    expect(header).toEqual([...CSV_HEADER]);
    expect(rows).toHaveLength(1);
    const row = Object.fromEntries(CSV_HEADER.map((name, i) => [name, rows[0]?.[i]]));
    expect(row).toMatchObject({ type: 'DEPOSIT', direction: 'DEPOSIT', state: 'COMPLETED', asset: 'BTC', amount: '0.0123', fee: '0', network: 'BITCOIN', hash: txHash, to_address: address });
    expect(row.date_utc).toMatch(new RegExp(`^${today}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$`));
    // Yesterday holds nothing; another asset neither.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(await download(await linkFor(alice, { from: yesterday, to: yesterday }))).toEqual([[...CSV_HEADER]]);
    expect(await download(await linkFor(alice, { currency: 'ETH', from: today, to: today }))).toEqual([[...CSV_HEADER]]);
  });

  it('streams every row of a long history once, oldest first, within the range of days', async () => {
    // 1,201 items of Bob's, many at the very same instant (the keyset must still take each once), across three days.
    await pool.query(
      `INSERT INTO wallet_transactions (wallet_account_id, transaction_type, direction, state, currency, amount, fee, fee_currency, fiat_currency, fiat_amount, reference, created_at)
       SELECT $1, 'WITHDRAWAL', 'WITHDRAWAL', 'COMPLETED', 'ETH', (1000000000000000 + n)::numeric, 21000000000000, 'ETH', 'USD', 123456, 'export-test:' || n,
              timestamptz '2025-03-01 23:59:59.999999+00' + (n / 600) * interval '1 day'
         FROM generate_series(0, 1200) AS n`,
      [bob.accountId],
    );
    const rows = (await download(await linkFor(bob, { currency: 'ETH', from: '2025-03-01', to: '2025-03-02' }))).slice(1);
    expect(rows).toHaveLength(1200);
    const amounts = rows.map((r) => r[5]);
    expect(new Set(amounts).size).toBe(1200);
    expect(rows[0]).toEqual(['2025-03-01T23:59:59.999Z', 'WITHDRAWAL', 'WITHDRAWAL', 'COMPLETED', 'ETH', rows[0]?.[5], '0.000021', 'ETH', '1234.56', 'USD', '', '', '', '']);
    // Items of one instant come in id order: compared as sets, each exactly once.
    expect([...amounts].sort()).toEqual(Array.from({ length: 1200 }, (_, n) => formatUnits(1_000_000_000_000_000n + BigInt(n), 18)).sort());
    expect(rows.at(-1)?.[0]).toBe('2025-03-02T23:59:59.999Z');
    // The last day alone: the one row of March 3rd.
    expect((await download(await linkFor(bob, { from: '2025-03-03', to: '2025-03-03' }))).slice(1)).toHaveLength(1);
  });

  it('refuses bad ranges with 400, and links that are forged, altered, expired or for someone else with 403', async () => {
    for (const body of [
      { from: '2025-02-30', to: '2025-03-01' },
      { from: '2025-03-02', to: '2025-03-01' },
      { from: 'yesterday', to: '2025-03-01' },
      { from: '2025-03-01' },
      { from: '1990-01-01', to: '2025-03-01' },
    ]) {
      const response = await post(alice, `/api/${alice.accountId}/asset/transactions/export`, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    // Only the owner gets a link.
    expect((await post(bob, `/api/${alice.accountId}/asset/transactions/export`, { from: '2025-03-01', to: '2025-03-01' })).status).toBe(403);
    const url = await linkFor(alice, { from: '2025-03-01', to: '2025-03-02' });
    const altered = [url.replace('to=2025-03-02', 'to=2025-03-03'), url.replace(alice.accountId, bob.accountId), url.replace(/signature=[^&]+/, 'signature=forged'), url.replace(/&signature=[^&]+/, '')];
    for (const wrong of altered) expect((await fetch(`${server.url}${wrong}`)).status, wrong).toBe(403);
    const expired = url.replace(/expires=\d+/, `expires=${Math.floor(Date.now() / 1000) - 1}`);
    expect((await fetch(`${server.url}${expired}`)).status).toBe(403);
    expect((await fetch(`${server.url}${url}`)).status).toBe(200);
  });
});
