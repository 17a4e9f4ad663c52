import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { SignJWT, importJWK, decodeJwt, type JWK } from 'jose';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { TEST_SECRETS_KEY } from '../../support/custody.ts';
import { parseSecretsKey, secretsKeyFrom } from '../../../src/server/adapters/keys/secrets-key.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import {
  clientConfig,
  codeFromLink,
  confirmEmail,
  finishAuthorization,
  readMailLink,
  refresh,
  refreshTokens,
  signIn,
  signUp,
  signUpAndSignIn,
  startAuthorization,
  submitLogin,
} from '../../support/auth.ts';

const PASSWORD = 'a quite long secret';

function json(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

describe('accounts and sign-in against the real server', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let db: pg.Client;
  let base: string;
  let counter = 0;
  const nextEmail = () => `user${++counter}-${Date.now()}@example.com`;
  /** The provider's private signing keys, as only a holder of SECRETS_KEY can read them from the database. */
  const signingKeys = async (): Promise<JWK[]> => {
    const row = await db.query<{ value: { sealed: string } }>(`SELECT value FROM app_setting WHERE key = 'idp.secrets'`);
    const key = secretsKeyFrom(parseSecretsKey(TEST_SECRETS_KEY) ?? Buffer.alloc(0), 'env');
    return (JSON.parse(key.open(row.rows[0]?.value.sealed ?? '', 'idp.secrets')) as { signingKeys: JWK[] }).signingKeys;
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // TRUST_PROXY lets the address-throttle test speak from other addresses through X-Forwarded-For.
    server = await startInProcess({ ...testServerEnv(database.url), PORT: String(port), PUBLIC_URL: base, TRUST_PROXY: 'on', SECRETS_KEY: TEST_SECRETS_KEY });
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await server?.close();
    await database?.drop();
  });

  it('publishes the client configuration the browser signs in with', async () => {
    expect(await clientConfig(base)).toEqual({
      oidc: {
        authority: `${base}/oidc`,
        clientId: 'wallet-web',
        redirectUri: `${base}/auth/callback`,
        silentRedirectUri: `${base}/auth/silent`,
        postLogoutRedirectUri: `${base}/auth`,
        scope: 'openid email profile offline_access',
        resource: `${base}/api`,
      },
      supportEmail: 'support@wallet.example',
      sellEnabled: false,
      buyEnabled: true,
      chainEnv: 'mainnet',
    });
    const discovery = (await (await fetch(`${base}/oidc/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.issuer).toBe(`${base}/oidc`);
    expect(discovery.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('signs up, confirms, signs in with code + PKCE and reads GET /api/user', async () => {
    const email = nextEmail();
    const user = await signUpAndSignIn(base, { email: email.toUpperCase(), password: PASSWORD, databaseUrl: database.url });
    const profile = await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${user.accessToken}` } });
    expect(profile.status).toBe(200);
    expect(await profile.json()).toEqual({
      email,
      accounts: [{ id: user.accountId, language: 'ENG', defaultFiatCurrency: 'USD', email }],
      pinCodeActive: false,
      tgAuth: false,
    });
    const access = decodeJwt(user.accessToken);
    expect(access).toMatchObject({ iss: `${base}/oidc`, aud: `${base}/api`, sub: user.userId, client_id: 'wallet-web' });
    expect(decodeJwt(user.idToken)).toMatchObject({ sub: user.userId, email, email_verified: true });
    const auth = await fetch(`${base}/api/user/auth`, { headers: { authorization: `Bearer ${user.accessToken}` } });
    expect(await auth.json()).toEqual({ tgAuth: false });
  });

  it('saves the default fiat currency and the language, refusing values outside the lists', async () => {
    const user = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url });
    const headers = { authorization: `Bearer ${user.accessToken}` };
    const fiat = await fetch(`${base}/api/user/default-fiat-currency/update/EUR`, { method: 'POST', headers });
    expect(fiat.status).toBe(200);
    const language = await fetch(`${base}/api/user/language/RUS`, { method: 'POST', headers });
    expect(((await language.json()) as { accounts: unknown[] }).accounts[0]).toMatchObject({ language: 'RUS', defaultFiatCurrency: 'EUR' });
    for (const path of ['/api/user/default-fiat-currency/update/RUB', '/api/user/default-fiat-currency/update/usd', '/api/user/language/DE']) {
      const response = await fetch(`${base}${path}`, { method: 'POST', headers });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ exceptionCode: 'VALIDATION' });
    }
  });

  it("answers refusals in the account's language, and before sign-in in the device's or the browser's (issue 33 item 2)", async () => {
    // The same user signed in again (sign-ups from one address are limited): its account speaks Russian since the test above.
    const users = await db.query<{ email: string; account: string }>(`SELECT u.email, a.id AS account FROM users u JOIN wallet_accounts a ON a.user_id = u.id WHERE u.language = 'RUS' LIMIT 1`);
    const user = await signIn(base, { email: users.rows[0]?.email ?? '', password: PASSWORD });
    const headers = { authorization: `Bearer ${user.accessToken}` };
    const missing = (extra: Record<string, string> = {}) => fetch(`${base}/api/${users.rows[0]?.account ?? ''}/asset/transaction/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, { headers: { ...headers, ...extra } });
    expect(await (await missing({ 'accept-language': 'en' })).json()).toEqual({ exceptionCode: 'TRANSACTION_NOT_FOUND', message: 'Такой операции нет.' });
    expect((await fetch(`${base}/api/user/language/ENG`, { method: 'POST', headers })).status).toBe(200);
    expect(await (await missing({ 'accept-language': 'ru' })).json()).toEqual({ exceptionCode: 'TRANSACTION_NOT_FOUND', message: 'No such transaction in this account' });
    // Signed out: the language cookie the sign-in pages set, else Accept-Language.
    const wrongCode = (extra: Record<string, string>) => fetch(`${base}/api/confirmation/confirm`, { ...json({ confirmationCode: 'no-such-code' }), headers: { 'content-type': 'application/json', ...extra } });
    expect(await (await wrongCode({ 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' })).json()).toEqual({ exceptionCode: 'CONFIRMATION_INVALID', message: 'Код неверный или устарел.' });
    expect(await (await wrongCode({ cookie: 'lang=RUS', 'accept-language': 'en' })).json()).toMatchObject({ message: 'Код неверный или устарел.' });
    expect(await (await wrongCode({ 'accept-language': 'en-GB' })).json()).toMatchObject({ exceptionCode: 'CONFIRMATION_INVALID', message: expect.not.stringMatching(/[а-я]/) });
  });

  it('rotates refresh tokens, and a reused one revokes the whole grant', async () => {
    const user = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url });
    const second = await refresh(base, user.refreshToken);
    expect(second.refreshToken).not.toBe(user.refreshToken);
    expect(decodeJwt(second.accessToken).aud).toBe(`${base}/api`);
    const reuse = await refreshTokens(base, user.refreshToken);
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: 'invalid_grant' });
    // The thief's reuse also ends the legitimate holder's newer token: the grant is gone.
    const after = await refreshTokens(base, second.refreshToken);
    expect(after.status).toBe(400);
  });

  it('revokes a refresh token at the revocation endpoint (sign-out)', async () => {
    const user = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url });
    const revoke = await fetch(`${base}/oidc/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: user.refreshToken, token_type_hint: 'refresh_token', client_id: 'wallet-web' }).toString(),
    });
    expect(revoke.status).toBe(200);
    expect((await refreshTokens(base, user.refreshToken)).status).toBe(400);
  });

  it('ends the session at the end-session endpoint and comes back to /auth', async () => {
    const email = nextEmail();
    await signUp(base, { email, password: PASSWORD });
    await confirmEmail(base, codeFromLink(await readMailLink(database.url, email, 'confirm_email')));
    const start = await startAuthorization(base);
    const tokens = await finishAuthorization(base, start, await submitLogin(base, start, { email, password: PASSWORD }));
    const end = new URL(`${base}/oidc/session/end`);
    end.search = new URLSearchParams({ id_token_hint: tokens.idToken, post_logout_redirect_uri: `${base}/auth`, client_id: 'wallet-web' }).toString();
    const page = await fetch(end, { headers: { cookie: start.jar.header() } });
    start.jar.store(page);
    const html = await page.text();
    const action = /action="([^"]+)"/.exec(html)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
    expect(action && xsrf).toBeTruthy();
    const confirm = await fetch(new URL(action ?? '', base), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: start.jar.header() },
      body: new URLSearchParams({ xsrf: xsrf ?? '', logout: 'yes' }).toString(),
    });
    expect(confirm.status).toBe(303);
    let location = confirm.headers.get('location') ?? '';
    if (new URL(location, base).pathname !== '/auth') {
      const next = await fetch(new URL(location, base), { redirect: 'manual', headers: { cookie: start.jar.header() } });
      location = next.headers.get('location') ?? '';
    }
    expect(new URL(location, base).pathname).toBe('/auth');
    expect((await refreshTokens(base, tokens.refreshToken)).status).toBe(400);
  });

  it('refuses a reused and an expired confirmation code', async () => {
    const email = nextEmail();
    await signUp(base, { email, password: PASSWORD });
    const code = codeFromLink(await readMailLink(database.url, email, 'confirm_email'));
    expect((await confirmEmail(base, code)).status).toBe(200);
    const reused = await confirmEmail(base, code);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ exceptionCode: 'CONFIRMATION_INVALID' });

    const late = nextEmail();
    await signUp(base, { email: late, password: PASSWORD });
    const lateCode = codeFromLink(await readMailLink(database.url, late, 'confirm_email'));
    await db.query(`UPDATE user_codes SET expires_at = now() - interval '1 second' WHERE user_id = (SELECT id FROM users WHERE email = $1)`, [late]);
    const expired = await confirmEmail(base, lateCode);
    expect(expired.status).toBe(400);
    expect(await expired.json()).toMatchObject({ exceptionCode: 'CONFIRMATION_INVALID' });
    // The mailed link points at the confirm page, and only a keyed hash of the code is stored.
    const stored = await db.query<{ code_hash: string }>('SELECT code_hash FROM user_codes');
    expect(stored.rows.every((row) => /^k1:[\w-]{43}$/.test(row.code_hash) && !row.code_hash.includes(lateCode))).toBe(true);
  });

  it('refuses to sign in an unconfirmed e-mail and a wrong password, back to the form with error', async () => {
    const email = nextEmail();
    await signUp(base, { email, password: PASSWORD });
    const start = await startAuthorization(base);
    const unconfirmed = new URL(await submitLogin(base, start, { email, password: PASSWORD }));
    expect(unconfirmed.pathname).toBe('/auth/login/email');
    expect(unconfirmed.searchParams.get('error')).toBe('1');
    expect(unconfirmed.searchParams.get('uid')).toBe(start.uid);
    await confirmEmail(base, codeFromLink(await readMailLink(database.url, email, 'confirm_email')));
    const wrong = new URL(await submitLogin(base, start, { email, password: 'not the password' }));
    expect(wrong.searchParams.get('error')).toBe('1');
    // The same interaction still completes with the right password.
    const tokens = await finishAuthorization(base, start, await submitLogin(base, start, { email, password: PASSWORD }));
    expect(tokens.accessToken).toBeTruthy();
  });

  it('answers a registered e-mail as a new one and mails its owner; refuses weak or common passwords with their codes', async () => {
    const email = nextEmail();
    const fresh = await fetch(`${base}/api/user`, json({ email, password: PASSWORD, accountName: 'Account' }));
    await confirmEmail(base, codeFromLink(await readMailLink(database.url, email, 'confirm_email')));
    const taken = await fetch(`${base}/api/user`, json({ email: email.toUpperCase(), password: 'another long secret', accountName: 'Account' }));
    expect(taken.status).toBe(fresh.status);
    expect(await taken.json()).toEqual(await fresh.json());
    // The owner hears of it, with the way to a new password; the account, its password and its mails stay as they were.
    expect(new URL(await readMailLink(database.url, email, 'signup_existing')).pathname).toBe('/auth/forgot');
    const accounts = await db.query('SELECT u.id FROM users u JOIN wallet_accounts w ON w.user_id = u.id WHERE u.email = $1', [email]);
    expect(accounts.rowCount).toBe(1);
    const confirmations = await db.query(`SELECT 1 FROM mail_outbox WHERE recipient = $1 AND kind = 'confirm_email'`, [email]);
    expect(confirmations.rowCount).toBe(1);
    expect((await signIn(base, { email, password: PASSWORD })).accessToken).toBeTruthy();
    for (const password of ['short', 'password123', 'x'.repeat(129)]) {
      const weak = await fetch(`${base}/api/user`, json({ email: nextEmail(), password, accountName: 'Account' }));
      expect(weak.status).toBe(400);
      expect(await weak.json()).toMatchObject({ exceptionCode: 'WEAK_PASSWORD', message: expect.any(String) });
    }
  });

  it('answers bad input on every endpoint with a 4xx and an exceptionCode', async () => {
    const cases: Array<[string, RequestInit]> = [
      ['/api/user', json({})],
      ['/api/user', json({ email: 'not-an-email', password: PASSWORD })],
      ['/api/user', json({ email: 'a@b.c', password: PASSWORD })],
      ['/api/user', json({ email: nextEmail(), password: 12345678 })],
      ['/api/user', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' }],
      ['/api/user', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: nextEmail(), password: 'x'.repeat(20_000) }) }],
      ['/api/user', json([1, 2])],
      ['/api/confirmation/confirm', json({})],
      ['/api/confirmation/confirm', json({ confirmationCode: '' })],
      ['/api/confirmation/confirm', json({ confirmationCode: 'nope' })],
      ['/api/confirmation/confirm', { method: 'POST', body: 'garbage' }],
      ['/api/password-reset', json({ email: 42 })],
      ['/api/password-reset', json(null)],
      ['/api/password-reset/confirm', json({ password: PASSWORD })],
      ['/api/password-reset/confirm', json({ password: PASSWORD, confirmationCode: 'unknown' })],
      ['/api/user/language/ENG', { method: 'POST' }],
      ['/api/user/default-fiat-currency/update/USD', { method: 'POST', headers: { authorization: 'Bearer nonsense' } }],
      ['/api/user', { method: 'GET', headers: { authorization: 'Basic abc' } }],
      ['/api/user/auth', { method: 'GET' }],
    ];
    for (const [path, init] of cases) {
      const response = await fetch(`${base}${path}`, init);
      expect(response.status, `${init.method} ${path} ${String(init.body).slice(0, 40)}`).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(await response.json()).toMatchObject({ exceptionCode: expect.any(String), message: expect.any(String) });
    }
  });

  it('refuses expired, foreign-audience and forged tokens with 401 UNAUTHORIZED', async () => {
    const user = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url });
    const jwk = (await signingKeys())[0];
    if (!jwk) throw new Error('no signing key stored');
    const key = await importJWK(jwk, 'RS256');
    const sign = (claims: { aud: string; exp: number }) =>
      new SignJWT({ client_id: 'wallet-web' }).setProtectedHeader({ alg: 'RS256', kid: jwk.kid ?? '', typ: 'at+jwt' }).setIssuer(`${base}/oidc`).setSubject(user.userId).setIssuedAt(claims.exp - 900).setAudience(claims.aud).setExpirationTime(claims.exp).sign(key);
    const now = Math.floor(Date.now() / 1000);
    const valid = await sign({ aud: `${base}/api`, exp: now + 60 });
    expect((await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${valid}` } })).status).toBe(200);
    const tampered = `${user.accessToken.slice(0, -4)}AAAA`;
    for (const token of [await sign({ aud: `${base}/api`, exp: now - 60 }), await sign({ aud: 'https://elsewhere/api', exp: now + 60 }), tampered]) {
      const response = await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ exceptionCode: 'UNAUTHORIZED' });
    }
  });

  it('rotates the signing key: tokens of the old key and of the new one both verify', async () => {
    const user = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url });
    await promisify(execFile)(process.execPath, ['src/server/cli/rotate-signing-key.ts'], { env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn', SECRETS_KEY: TEST_SECRETS_KEY } });
    const [fresh, previous] = await signingKeys();
    if (!fresh || !previous) throw new Error('the rotation kept no previous key');
    expect(fresh.kid).not.toBe(previous.kid);
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ client_id: 'wallet-web' })
      .setProtectedHeader({ alg: 'RS256', kid: fresh.kid ?? '', typ: 'at+jwt' })
      .setIssuer(`${base}/oidc`)
      .setSubject(user.userId)
      .setIssuedAt(now)
      .setAudience(`${base}/api`)
      .setExpirationTime(now + 60)
      .sign(await importJWK(fresh, 'RS256'));
    expect((await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const again = await signIn(base, { email: decodeJwt(user.idToken).email as string, password: PASSWORD });
    expect((await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${again.accessToken}` } })).status).toBe(200);
  });

  it('resets a password: same answer for unknown e-mails, old password and sessions end', async () => {
    const email = nextEmail();
    const user = await signUpAndSignIn(base, { email, password: PASSWORD, databaseUrl: database.url });
    const unknown = await fetch(`${base}/api/password-reset`, json({ email: nextEmail() }));
    const known = await fetch(`${base}/api/password-reset`, json({ email }));
    expect(unknown.status).toBe(known.status);
    expect(await unknown.json()).toEqual(await known.json());

    const link = await readMailLink(database.url, email, 'reset_password');
    expect(link).toMatch(new RegExp(`^${base}/auth/forgot/[\\w-]+$`));
    const weak = await fetch(`${base}/api/password-reset/confirm`, json({ password: 'password1', confirmationCode: codeFromLink(link) }));
    expect(await weak.json()).toMatchObject({ exceptionCode: 'WEAK_PASSWORD' });
    const newPassword = 'another long secret';
    const done = await fetch(`${base}/api/password-reset/confirm`, json({ password: newPassword, confirmationCode: codeFromLink(link) }));
    expect(done.status).toBe(200);
    const again = await fetch(`${base}/api/password-reset/confirm`, json({ password: newPassword, confirmationCode: codeFromLink(link) }));
    expect(await again.json()).toMatchObject({ exceptionCode: 'CONFIRMATION_INVALID' });

    expect((await refreshTokens(base, user.refreshToken)).status).toBe(400);
    expect((await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${user.accessToken}` } })).status).toBe(401);
    await expect(signIn(base, { email, password: PASSWORD })).rejects.toThrow(/refused/);
    const fresh = await signIn(base, { email, password: newPassword });
    expect((await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${fresh.accessToken}` } })).status).toBe(200);
  });

  it('throttles an account after repeated wrong passwords, even for the right one, with its own error', async () => {
    const email = nextEmail();
    await signUp(base, { email, password: PASSWORD });
    await confirmEmail(base, codeFromLink(await readMailLink(database.url, email, 'confirm_email')));
    const start = await startAuthorization(base);
    for (let i = 0; i < 5; i += 1) {
      expect(new URL(await submitLogin(base, start, { email, password: `wrong ${i} password` })).searchParams.get('error')).toBe('1');
    }
    const locked = new URL(await submitLogin(base, start, { email, password: PASSWORD }));
    expect(locked.searchParams.get('error')).toBe('throttled');
    expect(Number(locked.searchParams.get('retryAfter'))).toBeGreaterThan(0);
  });

  it('a storm of wrong passwords against one account does not hold up another user', async () => {
    const victim = nextEmail();
    await signUp(base, { email: victim, password: PASSWORD });
    const other = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url }).then(() => undefined);
    expect(other).toBeUndefined();
    const bystander = nextEmail();
    await signUp(base, { email: bystander, password: PASSWORD });
    await confirmEmail(base, codeFromLink(await readMailLink(database.url, bystander, 'confirm_email')));

    const attacker = await startAuthorization(base);
    const storm = Promise.all(
      Array.from({ length: 200 }, (_, i) => submitLogin(base, attacker, { email: victim, password: `guess ${i} nope` }).then((location) => new URL(location).searchParams.get('error'))),
    );
    const started = Date.now();
    const tokens = await signIn(base, { email: bystander, password: PASSWORD });
    const took = Date.now() - started;
    const outcomes = await storm;
    expect(tokens.accessToken).toBeTruthy();
    expect(took).toBeLessThan(3000);
    // Nearly all of the storm is refused before any hashing.
    expect(outcomes.filter((e) => e === 'throttled').length).toBeGreaterThan(180);
  });

  it('throttles a client address that fails across many accounts, not other addresses', async () => {
    const address = '203.0.113.7';
    const start = await startAuthorization(base);
    const attempt = (email: string, from: string) =>
      fetch(`${base}/oidc/interaction/${start.uid}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: start.jar.header(), 'x-forwarded-for': from },
        body: new URLSearchParams({ email, password: 'wrong password here' }).toString(),
      }).then((response) => new URL(response.headers.get('location') ?? '', base).searchParams.get('error'));
    for (let batch = 0; batch < 25; batch += 1) await Promise.all([attempt(nextEmail(), address), attempt(nextEmail(), address)]);
    expect(await attempt(nextEmail(), address)).toBe('throttled');
    expect(await attempt(nextEmail(), '198.51.100.9')).toBe('1');
  });
});
