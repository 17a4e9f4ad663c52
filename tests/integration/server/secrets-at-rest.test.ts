import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createHash, randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort, runUntilExit } from '../../support/server.ts';
import { startInProcess, startProductionInProcess, type InProcessServer } from '../../support/in-process.ts';
import { codeFromLink, readMailLink, refresh, refreshTokens, signUp, signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { TEST_MNEMONIC } from '../../support/custody.ts';
import { SIGNATURE_HEADER, signWebhook } from '../../../src/server/adapters/webhooks/port.ts';
import { parseSecretsKey, secretsKeyFrom } from '../../../src/server/adapters/keys/secrets-key.ts';

const PASSWORD = 'a quite long secret';
const KEY = randomBytes(32).toString('base64');
const OTHER_KEY = randomBytes(32).toString('hex');

type Setting = { sealed?: string } & Record<string, unknown>;

/**
 * Issue 14, item 9: nothing read from the database can be replayed. The tables are read after the real flows, and
 * what they hold is presented back to the server; the server restarts on the same SECRETS_KEY and still works.
 */
describe('secrets at rest', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let env: Record<string, string>;
  let db: pg.Client;
  let user: SignedInUser & { email: string };

  const setting = async (key: string): Promise<Setting | undefined> => (await db.query<{ value: Setting }>('SELECT value FROM app_setting WHERE key = $1', [key])).rows[0]?.value;
  const restart = async (extra: Record<string, string> = {}) => {
    // Shut down cleanly (what `npm start` exits 0 after), then start again on the same port and database.
    await server.close();
    server = await startInProcess({ ...env, ...extra });
  };
  const getUser = (token: string) => fetch(`${server.url}/api/user`, { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    // One seed across the restarts (each in-process start has a DATA_DIR of its own, where a missing seed is generated).
    env = { DATABASE_URL: database.url, WALLET_SEED: TEST_MNEMONIC, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, SECRETS_KEY: KEY };
    server = await startInProcess(env);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const email = `secrets-${Date.now()}@example.com`;
    user = { ...(await signUpAndSignIn(server.url, { email, password: PASSWORD, databaseUrl: database.url })), email };
  });
  afterAll(async () => {
    await db?.end();
    await server?.close();
    await database?.drop();
  });

  it('stores no refresh token: the row holds neither the token nor anything the token endpoint takes', async () => {
    const rows = await db.query<{ id: string; payload: unknown; grant_id: string | null }>(`SELECT id, payload, grant_id FROM oidc_payload WHERE type = 'RefreshToken'`);
    expect(rows.rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows.rows)).not.toContain(user.refreshToken);
    for (const row of rows.rows) {
      for (const stored of [row.id, (row.payload as { jti?: string }).jti ?? '']) {
        const answer = await refreshTokens(server.url, stored);
        expect(answer.status).toBe(400);
        expect(((await answer.json()) as { error: string }).error).toBe('invalid_grant');
      }
    }
    // The token the client holds still works, and its grant is still revocable as a whole (reuse detection).
    const next = await refresh(server.url, user.refreshToken);
    expect((await getUser(next.accessToken)).status).toBe(200);
    user = { ...user, ...next };
  });

  it('seals the signing keys and the webhook secrets, and signs and verifies with them after a restart', async () => {
    const idp = await setting('idp.secrets');
    expect(Object.keys(idp ?? {})).toEqual(['sealed']);
    expect(idp?.sealed).toMatch(/^s1:/);
    expect(JSON.stringify(idp)).not.toMatch(/"(d|kty|signingKeys|cookieKeys)"/);
    for (const name of ['card.sandbox.secret', 'payout.sandbox.secret']) {
      const stored = await setting(name);
      expect(Object.keys(stored ?? {}), name).toEqual(['sealed']);
      expect(stored?.sealed).toMatch(/^s1:/);
    }
    const sealedBefore = idp?.sealed;

    await restart();
    // Tokens signed before the restart verify after it; a refresh signs new ones with the same keys.
    expect((await getUser(user.accessToken)).status).toBe(200);
    const next = await refresh(server.url, user.refreshToken);
    expect((await getUser(next.accessToken)).status).toBe(200);
    user = { ...user, ...next };
    expect((await setting('idp.secrets'))?.sealed).toBe(sealedBefore);
    // A webhook signed with a guessed secret is refused; the gateway knows its secret only through SECRETS_KEY.
    const body = '{}';
    const forged = await fetch(`${server.url}/api/webhooks/card`, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signWebhook('guess', body, Math.floor(Date.now() / 1000)) }, body });
    expect(forged.status).toBe(401);
  });

  it('moves plaintext rows written before sealing: keys, webhook secrets, refresh tokens and mailed codes keep working', async () => {
    // The state an older version left: plaintext keys and webhook secret, a bare-sha256 reset code, a refresh token by its own id.
    const sealing = secretsKeyFrom(parseSecretsKey(KEY) ?? Buffer.alloc(0), 'env');
    const plainKeys: unknown = JSON.parse(sealing.open((await setting('idp.secrets'))?.sealed ?? '', 'idp.secrets'));
    expect(plainKeys).toMatchObject({ signingKeys: [expect.objectContaining({ d: expect.any(String) })] });
    await db.query(`UPDATE app_setting SET value = $2 WHERE key = $1`, ['idp.secrets', plainKeys]);
    const secret = randomBytes(32).toString('hex');
    await db.query(`UPDATE app_setting SET value = $2 WHERE key = $1`, ['card.sandbox.secret', { secret }]);
    const code = randomBytes(32).toString('base64url');
    await db.query(`INSERT INTO user_codes (code_hash, user_id, purpose, expires_at) SELECT $1, id, 'reset_password', now() + interval '1 hour' FROM users WHERE email = $2`, [
      createHash('sha256').update(code).digest('hex'),
      user.email,
    ]);
    const moved = await db.query(
      `UPDATE oidc_payload SET id = $1, payload = payload || jsonb_build_object('jti', $1::text), grant_id = payload->>'grantId'
        WHERE type = 'RefreshToken' AND consumed_at IS NULL AND payload->>'accountId' = $2`,
      [user.refreshToken, user.userId],
    );
    expect(moved.rowCount).toBe(1);
    await restart();

    for (const name of ['idp.secrets', 'card.sandbox.secret']) expect(Object.keys((await setting(name)) ?? {})).toEqual(['sealed']);
    expect((await getUser(user.accessToken)).status).toBe(200);
    const body = '{}';
    const signed = await fetch(`${server.url}/api/webhooks/card`, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signWebhook(secret, body, Math.floor(Date.now() / 1000)) }, body });
    expect(signed.status).not.toBe(401);
    expect((await db.query(`SELECT 1 FROM oidc_payload WHERE id = $1`, [user.refreshToken])).rowCount).toBe(0);
    const next = await refresh(server.url, user.refreshToken);
    expect((await getUser(next.accessToken)).status).toBe(200);
    user = { ...user, ...next };
    expect((await db.query(`SELECT 1 FROM user_codes WHERE code_hash ~ '^[0-9a-f]{64}$'`)).rowCount).toBe(0);
    const reset = await fetch(`${server.url}/api/password-reset/confirm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ confirmationCode: code, password: `${PASSWORD} 2` }) });
    expect(reset.status).toBe(200);
  });

  it('keeps only keyed hashes of mailed codes: the confirmation code read from user_codes confirms nothing', async () => {
    const email = `secrets-code-${Date.now()}@example.com`;
    await signUp(server.url, { email, password: PASSWORD });
    const code = codeFromLink(await readMailLink(database.url, email, 'confirm_email'));
    const rows = await db.query<{ code_hash: string }>(`SELECT code_hash FROM user_codes c JOIN users u ON u.id = c.user_id WHERE u.email = $1`, [email]);
    expect(rows.rows).toHaveLength(1);
    const stored = rows.rows[0]?.code_hash ?? '';
    expect(stored).not.toContain(code);
    expect(stored).not.toBe(createHash('sha256').update(code).digest('hex'));
    const replayed = await fetch(`${server.url}/api/confirmation/confirm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ confirmationCode: stored }) });
    expect(replayed.status).toBe(400);
  });

  it('refuses to start with another SECRETS_KEY, in one line naming it', async () => {
    // The refusals are processes' own (their exit code and the one line they print); this server only steps aside.
    await server.close();
    try {
      const result = await runUntilExit({ ...env, SECRETS_KEY: OTHER_KEY });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^wallet: cannot start: SECRETS_KEY \(fingerprint [0-9a-f]{16}\) is not the key this database's secrets were sealed with/)]);
      expect(result.stderr).not.toContain(OTHER_KEY);
      const malformed = await runUntilExit({ ...env, SECRETS_KEY: 'not a key' });
      expect(malformed.code).toBe(1);
      expect(malformed.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^wallet: cannot start: SECRETS_KEY is invalid/)]);
    } finally {
      server = await startInProcess(env);
    }
  });
});

describe('secrets in production', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('refuses to start without SECRETS_KEY, in one line', async () => {
    const result = await runUntilExit({ DATABASE_URL: database.url, APP_ENV: 'production', WALLET_SEED: TEST_MNEMONIC, SECRETS_KEY: '' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^wallet: cannot start: SECRETS_KEY must be set in production/)]);
  });

  it('keeps no link in the outbox or the log when no SMTP_URL delivers the mail', async () => {
    const port = await freePort();
    const server = await startProductionInProcess({
      DATABASE_URL: database.url,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      APP_ENV: 'production',
      WALLET_SEED: TEST_MNEMONIC,
      SECRETS_KEY: KEY,
      LOG_LEVEL: 'info',
    });
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const email = `prod-outbox-${Date.now()}@example.com`;
      await signUp(server.url, { email, password: PASSWORD });
      const rows = await db.query<{ text: string; html: string }>('SELECT text, html FROM mail_outbox WHERE recipient = $1', [email]);
      expect(rows.rows).toHaveLength(1);
      expect(rows.rows[0]?.text).toContain('[link removed]');
      expect(JSON.stringify(rows.rows)).not.toMatch(/\/auth\/signup\/confirm\//);
      expect(server.output()).not.toMatch(/\/auth\/signup\/confirm\//);
    } finally {
      await db.end();
      await server.close();
    }
  });
});
