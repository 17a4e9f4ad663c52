import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, type InProcessServer } from '../../support/in-process.ts';
import { TEST_MNEMONIC } from '../../support/custody.ts';
import { codeFromLink, readMailLink, refresh, signUp, signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { SIGNATURE_HEADER, signWebhook } from '../../../src/server/adapters/webhooks/port.ts';
import { loadSecretsKey, openSecretsKey, parseSecretsKey, secretsKeyFrom } from '../../../src/server/adapters/keys/secrets-key.ts';
import { resealSecrets } from '../../../src/server/secrets-rotation.ts';
import { createLogger } from '../../../src/server/log.ts';

const PASSWORD = 'a quite long secret';
const KEY_A = randomBytes(32).toString('base64');
const KEY_B = randomBytes(32).toString('hex');
const ROOT = join(import.meta.dirname, '../../..');

const keyOf = (text: string) => secretsKeyFrom(parseSecretsKey(text) ?? Buffer.alloc(0), 'env');

/** npm run secrets:reseal, as an operator runs it beside the server. */
function runReseal(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/server/cli/reseal-secrets.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Issue 31 item 4: SECRETS_KEY rotated in place on real PostgreSQL. Values sealed and tokens issued under key A;
 * the servers restart on B with A previous and everything opens; the re-seal is interrupted, then run to its end by
 * the CLI; the servers restart on B alone and everything issued under A still works.
 */
describe('SECRETS_KEY rotation', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let env: Record<string, string>;
  let db: pg.Client;
  let early: SignedInUser;
  let untouched: SignedInUser;
  let cardSecret: string;
  let mailedCode: string;

  const getUser = (token: string) => fetch(`${server.url}/api/user`, { headers: { authorization: `Bearer ${token}` } });
  const webhookStatus = async (secret: string) => {
    const body = '{}';
    const answer = await fetch(`${server.url}/api/webhooks/card`, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signWebhook(secret, body, Math.floor(Date.now() / 1000)) }, body });
    return answer.status;
  };
  const sealedSettings = async () => (await db.query<{ key: string; value: { sealed: string } }>(`SELECT key, value FROM app_setting WHERE value ? 'sealed'`)).rows;
  const openKeys = (value: string, previous?: string) => openSecretsKey({ value, previous, dataDir: '/nonexistent', production: true }, createLogger('silent'), db);
  const restart = async (keys: Record<string, string>) => {
    // Shut down cleanly (what `npm start` exits 0 after), then start again on the same port and database.
    await server.close();
    server = await startInProcess({ ...env, ...keys });
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    // One seed across the restarts (each in-process start has a DATA_DIR of its own, where a missing seed is generated).
    env = { DATABASE_URL: database.url, WALLET_SEED: TEST_MNEMONIC, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` };
    server = await startInProcess({ ...env, SECRETS_KEY: KEY_A });
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    early = await signUpAndSignIn(server.url, { email: `rotation-a-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    untouched = await signUpAndSignIn(server.url, { email: `rotation-b-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
    const email = `rotation-code-${Date.now()}@example.com`;
    await signUp(server.url, { email, password: PASSWORD });
    mailedCode = codeFromLink(await readMailLink(database.url, email, 'confirm_email'));
    const card = (await sealedSettings()).find((row) => row.key === 'card.sandbox.secret');
    cardSecret = (JSON.parse(keyOf(KEY_A).open(card?.value.sealed ?? '', 'card.sandbox.secret')) as { secret: string }).secret;
  }, 240_000);
  afterAll(async () => {
    await db?.end();
    await server?.close();
    await database?.drop();
  }, 240_000);

  it('with the new key and the old one previous, everything sealed and issued under the old opens', async () => {
    expect(await webhookStatus(cardSecret)).not.toBe(401);
    await restart({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A });
    expect((await getUser(early.accessToken)).status).toBe(200);
    const next = await refresh(server.url, early.refreshToken);
    expect((await getUser(next.accessToken)).status).toBe(200);
    early = { ...early, ...next };
    expect(await webhookStatus(cardSecret)).not.toBe(401);
    expect(await webhookStatus('a guessed secret')).toBe(401);
  }, 240_000);

  it('refuses the old key alone, and a third key, while the rotation is under way', async () => {
    // What every process runs at its start (main.ts, the worker, the tools), on this database: the server turns its
    // SecretsKeyError into the one-line refusal secrets-at-rest.test.ts checks.
    await expect(openKeys(KEY_A)).rejects.toThrow(/being moved to another SECRETS_KEY .*npm run secrets:reseal/);
    await expect(openKeys(randomBytes(32).toString('base64'), KEY_A)).rejects.toThrow(/another new SECRETS_KEY .* is already sealing/);
    await expect(openKeys(KEY_B)).rejects.toThrow(/the re-seal has not finished/);
    await expect(openKeys(KEY_B, KEY_A)).resolves.toMatchObject({ fingerprint: keyOf(KEY_B).fingerprint });
  }, 240_000);

  it('an interrupted re-seal resumes, and then the database needs only the new key', async () => {
    const rotating = await loadSecretsKey({ value: KEY_B, previous: KEY_A, dataDir: '/nonexistent', production: true }, createLogger('silent'));
    let moved = 0;
    await expect(
      resealSecrets(db, rotating, () => {
        moved += 1;
        if (moved === 2) throw new Error('killed mid-way');
      }),
    ).rejects.toThrow('killed mid-way');
    const onlyB = keyOf(KEY_B);
    const settings = await sealedSettings();
    // Part moved, part not: the rotation is not recorded as done.
    expect(settings.some((row) => onlyB.sealedWithCurrent(row.value.sealed, row.key))).toBe(true);
    expect(settings.some((row) => !onlyB.sealedWithCurrent(row.value.sealed, row.key))).toBe(true);
    expect((await db.query(`SELECT value FROM app_setting WHERE key = 'secrets.key'`)).rows[0]?.value).toEqual({ fingerprint: keyOf(KEY_A).fingerprint, next: onlyB.fingerprint });

    const run = await runReseal({ ...env, SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^re-sealed under SECRETS_KEY ${onlyB.fingerprint}: \\d+ sealed settings, [1-9]\\d* sessions and tokens and \\d+ deposit address MACs moved`));
    for (const row of await sealedSettings()) expect(onlyB.sealedWithCurrent(row.value.sealed, row.key), row.key).toBe(true);
    for (const row of (await db.query<{ payload: { jti: string } }>(`SELECT payload FROM oidc_payload WHERE expires_at > now()`)).rows) expect(onlyB.sealedWithCurrent(row.payload.jti, 'oidc.jti')).toBe(true);
    expect((await db.query(`SELECT value FROM app_setting WHERE key = 'secrets.key'`)).rows[0]?.value).toEqual({ fingerprint: onlyB.fingerprint });
    // Run again: nothing left to move.
    const again = await runReseal({ ...env, SECRETS_KEY: KEY_B });
    expect(again.stdout).toMatch(/: 0 sealed settings, 0 sessions and tokens and 0 deposit address MACs moved/);
  }, 240_000);

  it('starts with the new key alone: tokens issued before the rotation, the webhook secret and the signing keys all work', async () => {
    await restart({ SECRETS_KEY: KEY_B });
    expect((await getUser(untouched.accessToken)).status).toBe(200);
    const fresh = await refresh(server.url, untouched.refreshToken);
    expect((await getUser(fresh.accessToken)).status).toBe(200);
    const next = await refresh(server.url, early.refreshToken);
    expect((await getUser(next.accessToken)).status).toBe(200);
    expect(await webhookStatus(cardSecret)).not.toBe(401);
    // The old key alone no longer opens this database.
    await expect(openKeys(KEY_A)).rejects.toThrow(/is not the key this database's secrets were sealed with/);
  }, 240_000);

  it('keeps a code mailed before the rotation while the old key stays previous', async () => {
    await restart({ SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A });
    const confirmed = await fetch(`${server.url}/api/confirmation/confirm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ confirmationCode: mailedCode }) });
    expect(confirmed.status).toBe(200);
  }, 240_000);
});
