import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort, launchServer, type LaunchedServer } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { codeFromLink, confirmEmail, finishAuthorization, readMailLink, signUp, signUpAndSignIn, startAuthorization, submitLogin } from '../../support/auth.ts';

const PASSWORD = 'a quite long secret';

/**
 * Issue 14 item 15: an access token stops working within 5 s of sign-out or revocation, in the process that signed
 * the user out and in a second gateway process on the same database that had the token verified and cached. The
 * first runs in this process (measured by coverage); the second is a process of its own, so its cache is truly apart.
 */
describe('access tokens of an ended grant', () => {
  let database: TestDatabase;
  let first: InProcessServer;
  let second: LaunchedServer;
  let base: string;
  let other: string;
  let counter = 0;
  const nextEmail = () => `revoke${++counter}-${Date.now()}@example.com`;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const [port, otherPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    other = `http://127.0.0.1:${otherPort}`;
    // One public URL (one issuer, one audience) behind two processes, as behind a load balancer.
    first = await startInProcess({ ...testServerEnv(database.url), PORT: String(port), PUBLIC_URL: base });
    second = await launchServer({ ...testServerEnv(database.url), PORT: String(otherPort), PUBLIC_URL: base });
  });
  afterAll(async () => {
    await first?.close();
    await second?.stop();
    await database?.drop();
  });

  const status = async (server: string, token: string, path = '/api/user') => (await fetch(server + path, { headers: { authorization: `Bearer ${token}` } })).status;

  /**
   * Both processes take the token (and so have it cached). After `end` the process that ended it refuses it at once,
   * the other within 5 s. With `account`, on the balances poll too, which a process answers from memory once it has
   * the token, the owner and the list (balances-hot-path.ts): the poll is asked first, and alone until it refuses,
   * since a refusal on /api/user drops the token from the process's memory and would hide a poll that still took it.
   */
  async function expectEndedWithin5s(token: string, end: () => Promise<void>, account?: string): Promise<void> {
    const paths = [...(account ? [`/api/${account}/asset`] : []), '/api/user'];
    for (const server of [base, other]) {
      for (const path of paths) {
        expect(await status(server, token, path), path).toBe(200);
        expect(await status(server, token, path), path).toBe(200);
      }
    }
    await end();
    for (const path of paths) expect(await status(base, token, path), `the signing-out process still takes the token on ${path}`).toBe(401);
    const started = Date.now();
    const refused = new Set<string>();
    while (Date.now() - started < 5_000 && refused.size < paths.length) {
      const path = paths[refused.size] ?? '';
      if ((await status(other, token, path)) === 401) refused.add(path);
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (const path of paths) expect(refused.has(path), `the second process still takes the token on ${path}`).toBe(true);
    // Refused for good, not by chance.
    for (const path of paths) expect(await status(other, token, path)).toBe(401);
  }

  it('refuses the access token after its refresh token is revoked (the app signing out)', async () => {
    const user = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url });
    await expectEndedWithin5s(user.accessToken, async () => {
      const revoke = await fetch(`${base}/oidc/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: user.refreshToken, token_type_hint: 'refresh_token', client_id: 'wallet-web' }).toString(),
      });
      expect(revoke.status).toBe(200);
    }, user.accountId);
  });

  it('refuses the access token after sign-out at the end-session endpoint', async () => {
    const email = nextEmail();
    await signUp(base, { email, password: PASSWORD });
    await confirmEmail(base, codeFromLink(await readMailLink(database.url, email, 'confirm_email')));
    const start = await startAuthorization(base);
    const tokens = await finishAuthorization(base, start, await submitLogin(base, start, { email, password: PASSWORD }));
    await expectEndedWithin5s(tokens.accessToken, async () => {
      const end = new URL(`${base}/oidc/session/end`);
      end.search = new URLSearchParams({ id_token_hint: tokens.idToken, post_logout_redirect_uri: `${base}/auth`, client_id: 'wallet-web' }).toString();
      const page = await fetch(end, { headers: { cookie: start.jar.header() } });
      start.jar.store(page);
      const html = await page.text();
      const action = /action="([^"]+)"/.exec(html)?.[1] ?? '';
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const confirm = await fetch(new URL(action, base), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: start.jar.header() },
        body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
      });
      expect(confirm.status).toBe(303);
    });
  });

  it('refuses the access token in every process after a password reset', async () => {
    const email = nextEmail();
    const user = await signUpAndSignIn(base, { email, password: PASSWORD, databaseUrl: database.url });
    await expectEndedWithin5s(user.accessToken, async () => {
      await fetch(`${base}/api/password-reset`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
      const code = codeFromLink(await readMailLink(database.url, email, 'reset_password'));
      const done = await fetch(`${base}/api/password-reset/confirm`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: 'another long secret', confirmationCode: code }),
      });
      expect(done.status).toBe(200);
    }, user.accountId);
  });

  it('keeps taking the tokens of grants that live on', async () => {
    const user = await signUpAndSignIn(base, { email: nextEmail(), password: PASSWORD, databaseUrl: database.url });
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(await status(other, user.accessToken)).toBe(200);
    expect(await status(base, user.accessToken)).toBe(200);
  });
});
