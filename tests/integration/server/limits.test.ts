import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort, launchServer, type LaunchedServer } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { codeFromLink, confirmEmail, readMailLink, signIn, signUp, startAuthorization, submitLogin, type AuthorizationStart } from '../../support/auth.ts';
import { ACCOUNT_POLICY, PAIR_POLICY } from '../../../src/server/domain/throttle.ts';
import { openDatabase } from '../../../src/server/db/database.ts';
import { createLogger } from '../../../src/server/log.ts';
import { createUserService } from '../../../src/server/domain/users.ts';
import { createPasswordHasher } from '../../../src/server/domain/passwords.ts';
import { parseSecretsKey, secretsKeyFrom } from '../../../src/server/adapters/keys/secrets-key.ts';
import { TEST_SECRETS_KEY } from '../../support/custody.ts';

const PASSWORD = 'a quite long secret';
const PUBLIC_LIMIT = 6;
const MAIL_LIMIT = 3;

function json(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/**
 * Issue 14 items 6, 7, 8 and 12 against two real gateway processes on one database, behind one proxy hop
 * (TRUST_PROXY=on): the test plays the proxy, so the right-most X-Forwarded-For entry is the client it saw. `a` runs
 * in this process (measured by coverage), `b` is a process of its own: a count either keeps in memory, the other
 * cannot see.
 */
describe('limits shared by two gateway processes', () => {
  let database: TestDatabase;
  let a: InProcessServer;
  let b: LaunchedServer;
  let db: pg.Client;
  let seq = 0;
  const nextEmail = () => `limits-${++seq}-${Date.now()}@example.com`;

  /** One POST of the sign-in form from `from` (what the proxy appends), with whatever the client put before it. */
  const attempt = async (server: { url: string }, start: AuthorizationStart, email: string, password: string, from: string, spoofed = '') => {
    const response = await fetch(`${server.url}/oidc/interaction/${start.uid}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: start.jar.header(), 'x-forwarded-for': spoofed ? `${spoofed}, ${from}` : from },
      body: new URLSearchParams({ email, password }).toString(),
    });
    return new URL(response.headers.get('location') ?? '', server.url).searchParams.get('error');
  };

  const confirmedUser = async () => {
    const email = nextEmail();
    await signUp(a.url, { email, password: PASSWORD });
    await confirmEmail(a.url, codeFromLink(await readMailLink(database.url, email, 'confirm_email')));
    return email;
  };

  const mails = async (to: string, kind?: string) => {
    const rows = await db.query<{ count: string }>('SELECT count(*) FROM mail_outbox WHERE recipient = $1 AND ($2::text IS NULL OR kind = $2)', [to, kind ?? null]);
    return Number(rows.rows[0]?.count);
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    // Two processes behind one public address, as behind a load balancer, on the same seed and secrets key.
    const env = { ...testServerEnv(database.url), PUBLIC_URL: `http://127.0.0.1:${port}`, TRUST_PROXY: 'on', PUBLIC_RATE_LIMIT: String(PUBLIC_LIMIT), MAIL_RATE_LIMIT: String(MAIL_LIMIT) };
    [a, b] = await Promise.all([startInProcess({ ...env, PORT: String(port) }), launchServer(env)]);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await a?.close();
    await b?.stop();
    await database?.drop();
  });

  it('counts one public limit across both processes, whatever first hops the client makes up', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 2 * PUBLIC_LIMIT; i += 1) {
      const server = i % 2 === 0 ? a : b;
      const response = await fetch(`${server.url}/api/b2c/fiat/method`, json({}, { 'x-forwarded-for': `10.${i}.0.1, 203.0.113.10` }));
      statuses.push(response.status);
    }
    // Each process alone would have let all of them through (each saw PUBLIC_LIMIT).
    expect(statuses.filter((status) => status !== 429)).toHaveLength(PUBLIC_LIMIT);
    expect(statuses.slice(PUBLIC_LIMIT).every((status) => status === 429)).toBe(true);
    const refused = await fetch(`${a.url}/api/b2c/fiat/method`, json({}, { 'x-forwarded-for': '203.0.113.10' }));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ exceptionCode: 'TOO_MANY_REQUESTS' });
    // Another client is not held up.
    expect((await fetch(`${b.url}/api/b2c/fiat/method`, json({}, { 'x-forwarded-for': '203.0.113.11' }))).status).toBe(400);
  });

  it('locks the attacker’s address out of an account while the owner signs in from another', async () => {
    const email = await confirmedUser();
    const attacker = '203.0.113.66';
    const start = await startAuthorization(a.url);
    for (let i = 0; i < PAIR_POLICY.maxFailures; i += 1) {
      expect(await attempt(i % 2 ? a : b, start, email, `wrong guess ${i}`, attacker)).toBe('1');
    }
    // Locked for the attacker's address on both processes, even with the right password and made-up first hops.
    expect(await attempt(a, start, email, PASSWORD, attacker)).toBe('throttled');
    for (let i = 0; i < 20; i += 1) expect(await attempt(b, start, email, `sprayed ${i}`, attacker, `198.18.${i}.1`)).toBe('throttled');
    // The owner, from their own address (the proxy's socket without a forwarded hop here), is let in.
    const tokens = await signIn(a.url, { email, password: PASSWORD });
    expect(tokens.accessToken).toBeTruthy();
    // Still locked for the attacker after the owner's success.
    expect(await attempt(b, start, email, PASSWORD, attacker)).toBe('throttled');
    expect(await mails(email, 'account_locked')).toBe(0);
  });

  it('trips the per-account ceiling on guessing spread over many addresses, telling the owner once; a reset lifts it', async () => {
    const email = await confirmedUser();
    const start = await startAuthorization(a.url);
    const addresses = Math.ceil(ACCOUNT_POLICY.maxFailures / PAIR_POLICY.maxFailures);
    const outcomes: Array<string | null> = [];
    for (let n = 0; n < addresses; n += 1) {
      const from = `198.51.100.${n + 1}`;
      const batch = Array.from({ length: PAIR_POLICY.maxFailures }, (_, i) => attempt(i % 2 ? a : b, start, email, `spread guess ${n}-${i}`, from));
      outcomes.push(...(await Promise.all(batch)));
    }
    expect(outcomes.filter((outcome) => outcome === '1')).toHaveLength(ACCOUNT_POLICY.maxFailures);
    // More guesses from fresh addresses, and the owner too, are refused now; the owner got one mail for the trip.
    for (let i = 0; i < 5; i += 1) expect(await attempt(i % 2 ? a : b, start, email, `late guess ${i}`, `192.0.2.${i + 1}`)).toBe('throttled');
    await expect(signIn(b.url, { email, password: PASSWORD })).rejects.toThrow(/throttled/);
    await expect.poll(() => mails(email, 'account_locked'), { timeout: 5000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await mails(email, 'account_locked')).toBe(1);
    const notice = await db.query<{ text: string; subject: string }>("SELECT text, subject FROM mail_outbox WHERE recipient = $1 AND kind = 'account_locked'", [email]);
    expect(notice.rows[0]?.subject).toBe('Someone is trying to sign in to your wallet');

    // The owner proves the mailbox with a reset: the ceiling no longer stands in the way.
    expect((await fetch(`${a.url}/api/password-reset`, json({ email }))).status).toBe(200);
    const link = await readMailLink(database.url, email, 'reset_password');
    const newPassword = 'another long secret';
    expect((await fetch(`${b.url}/api/password-reset/confirm`, json({ password: newPassword, confirmationCode: codeFromLink(link) }))).status).toBe(200);
    expect((await signIn(a.url, { email, password: newPassword })).accessToken).toBeTruthy();
  }, 120_000);

  it('sends at most the cap of mails to one address, whatever 30 reset requests on two processes ask for', async () => {
    const email = await confirmedUser();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i += 1) {
      // From many client addresses, so only the limits per e-mail address and the mail cap stand in the way.
      const response = await fetch(`${(i % 2 ? a : b).url}/api/password-reset`, json({ email }, { 'x-forwarded-for': `198.51.${i}.9` }));
      statuses.push(response.status);
    }
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // The confirmation mail counted too: everything to this address in the hour is at most the cap.
    expect(await mails(email)).toBe(MAIL_LIMIT);
    expect(await mails(email, 'reset_password')).toBe(MAIL_LIMIT - 1);
    // Signing up with the address whose share is used up answers 201 as for a new one: no 429 tells them apart.
    const signUp = await fetch(`${a.url}/api/user`, json({ email, password: PASSWORD, accountName: 'Account' }, { 'x-forwarded-for': '203.0.113.77' }));
    expect(signUp.status).toBe(201);
    expect(await mails(email)).toBe(MAIL_LIMIT);
  });

  it('limits sign-ups per e-mail address and per client address on both processes', async () => {
    const email = nextEmail();
    const answers: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await fetch(`${(i % 2 ? a : b).url}/api/user`, json({ email, password: PASSWORD, accountName: 'Account' }, { 'x-forwarded-for': `100.64.${i}.1` }));
      answers.push(response.status);
    }
    // The first creates the account; the next answer alike (201) until the per-address limit says 429.
    expect(answers.slice(3)).toEqual([429, 429]);
    const client = '100.65.0.1';
    const fromOne: number[] = [];
    for (let i = 0; i < 22; i += 1) {
      const response = await fetch(`${(i % 2 ? a : b).url}/api/user`, json({ email: nextEmail(), password: PASSWORD, accountName: 'Account' }, { 'x-forwarded-for': client }));
      fromOne.push(response.status);
    }
    expect(fromOne.filter((status) => status === 201)).toHaveLength(20);
    expect(fromOne.slice(20)).toEqual([429, 429]);
  }, 60_000);

  it('keeps a sign-in fast while a burst of sign-ups from many addresses hashes passwords', async () => {
    const email = await confirmedUser();
    /** The sign-in form's submit alone: the request that checks the password. */
    const timedLogin = async () => {
      const start = await startAuthorization(a.url);
      const started = performance.now();
      const location = await submitLogin(a.url, start, { email, password: PASSWORD });
      const took = performance.now() - started;
      expect(new URL(location).pathname).not.toBe('/auth/login/email');
      return took;
    };
    const quiet: number[] = [];
    for (let i = 0; i < 3; i += 1) quiet.push(await timedLogin());
    const baseline = Math.min(...quiet);

    const burst = Array.from({ length: 60 }, (_, i) =>
      fetch(`${a.url}/api/user`, json({ email: nextEmail(), password: `${PASSWORD} ${i}`, accountName: 'Account' }, { 'x-forwarded-for': `100.72.${i}.1` })).then((r) => r.status),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const during = await timedLogin();
    const statuses = await Promise.all(burst);
    // Behind 60 queued hashes the check waited for some 30 of them (2-4 s here, where a quiet one takes 60-90 ms);
    // beside the sign-ups' own lane it waits for none (250-400 ms on a loaded 2-core machine).
    expect(during).toBeLessThan(baseline * 6 + 600);
    // Sign-ups beyond their short queue are told to come back (503 BUSY), never a 500; the rest are created.
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThan(0);
  }, 60_000);

  it('prunes throttle rows by their own windows: a day for the account ceiling, minutes for keys with an address', async () => {
    const opened = await openDatabase({ databaseUrl: database.url, dataDir: '.', poolSize: 2 }, createLogger('silent'));
    try {
      const users = createUserService({ db: opened.db, pool: opened.pool, log: createLogger('silent'), hasher: createPasswordHasher({ lanes: 1 }), mailer: { send: async () => {}, close: () => {} }, secrets: secretsKeyFrom(parseSecretsKey(TEST_SECRETS_KEY) ?? Buffer.alloc(32), 'env'), publicUrl: 'http://x' });
      await db.query("DELETE FROM login_throttle WHERE key LIKE '%prune.example'");
      await db.query(`INSERT INTO login_throttle (key, failures, window_started_at, locked_until) VALUES
        ('email:a@prune.example', 3, now() - interval '1 hour', NULL),
        ('email:b@prune.example', 3, now() - interval '25 hours', NULL),
        ('email:c@prune.example', 60, now() - interval '25 hours', now() + interval '1 hour'),
        ('email:a@prune.example|ip:198.51.100.1', 2, now() - interval '1 hour', NULL),
        ('ip:198.51.100.1|prune.example', 2, now() - interval '1 hour', NULL),
        ('ip:198.51.100.2|prune.example', 60, now() - interval '1 hour', now() + interval '10 minutes')`);
      await users.pruneThrottle();
      const left = await db.query<{ key: string }>("SELECT key FROM login_throttle WHERE key LIKE '%prune.example%' ORDER BY key");
      expect(left.rows.map((row) => row.key)).toEqual(['email:a@prune.example', 'email:c@prune.example', 'ip:198.51.100.2|prune.example']);
    } finally {
      await opened.close();
    }
  });
});
