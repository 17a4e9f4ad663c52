import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { decodeJwt } from 'jose';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { codeFromLink, readMailLink, refresh, refreshTokens, signIn, signUpAndSignIn } from '../../support/auth.ts';
import { botMessagesTo, forgedInitData, initDataFor, newTelegramUser, postUpdate, startUpdate, telegramEnv, TEST_BOT_USERNAME } from '../../support/telegram.ts';

type TokenUser = { access_token: string; id_token: string; refresh_token: string; expires_at: number; profile: { sub: string; iss: string; auth_time: number } };
type Profile = { email: string | null; accounts: Array<{ id: string }>; tgAuth: boolean };

const post = (url: string, body: unknown, token?: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

describe('Telegram sign-in, linking and the bot against the real server', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let base: string;
  let counter = 0;
  const nextEmail = () => `tg${++counter}-${Date.now()}@example.com`;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startInProcess({ ...testServerEnv(database.url), PORT: String(port), PUBLIC_URL: base, ...telegramEnv() });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  const authTg = async (initData: string) => post(`${base}/api/auth/tg`, { initData });
  const profileOf = async (token: string) => (await (await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${token}` } })).json()) as Profile;

  it('signs a first-time Telegram user in with tokens of the identity provider, and gives them an account', async () => {
    const user = newTelegramUser({ language_code: 'ru' });
    const response = await authTg(initDataFor(user));
    expect(response.status).toBe(200);
    const first = (await response.json()) as TokenUser;
    const access = decodeJwt(first.access_token);
    expect(access.iss).toBe(`${base}/oidc`);
    expect(access.aud).toBe(`${base}/api`);
    expect(first.profile.sub).toBe(access.sub);
    expect(first.profile.iss).toBe(`${base}/oidc`);
    expect(first.expires_at).toBeGreaterThan(Date.now() / 1000);

    const profile = await profileOf(first.access_token);
    expect(profile).toMatchObject({ email: null, tgAuth: true });
    expect(profile.accounts).toHaveLength(1);

    // The same Telegram user again: the same user, no second account.
    const again = (await (await authTg(initDataFor(user))).json()) as TokenUser;
    expect(again.profile.sub).toBe(first.profile.sub);
    expect((await profileOf(again.access_token)).accounts).toEqual(profile.accounts);

    // The refresh token rotates through the provider's refresh grant like an e-mail sign-in's, keeping auth_time.
    const renewed = await refresh(base, first.refresh_token);
    expect(decodeJwt(renewed.accessToken).sub).toBe(first.profile.sub);
    expect(decodeJwt(renewed.idToken).auth_time).toBe(first.profile.auth_time);
    expect((await refreshTokens(base, first.refresh_token)).status).toBe(400);
  });

  it('creates one account when a new Telegram user opens the app twice at once', async () => {
    const user = newTelegramUser();
    const answers = await Promise.all([authTg(initDataFor(user)), authTg(initDataFor(user)), authTg(initDataFor(user))]);
    const subs = await Promise.all(answers.map(async (answer) => ((await answer.json()) as TokenUser).profile.sub));
    expect(new Set(subs).size).toBe(1);
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const accounts = await db.query('SELECT count(*)::int AS n FROM wallet_accounts WHERE user_id = $1', [subs[0]]);
    await db.end();
    expect(accounts.rows[0].n).toBe(1);
  });

  it('refuses forged, stale and malformed init data with the codes of SPEC §8', async () => {
    const user = newTelegramUser();
    const forged = await authTg(forgedInitData(user));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ exceptionCode: 'B2C_USM0025' });
    const wrongToken = await authTg(initDataFor(user, { token: '7123456789:AAE-some-other-bot-token-000000000' }));
    expect(await wrongToken.json()).toMatchObject({ exceptionCode: 'B2C_USM0025' });
    const stale = await authTg(initDataFor(user, { ageS: 3700 }));
    expect(stale.status).toBe(401);
    expect(await stale.json()).toMatchObject({ exceptionCode: 'B2C_USM0023' });
    const missing = await post(`${base}/api/auth/tg`, {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ exceptionCode: 'VALIDATION' });
    const notJson = await fetch(`${base}/api/auth/tg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(notJson.status).toBe(400);
    expect(await (await authTg('user=%7B%7D&hash=00')).json()).toMatchObject({ exceptionCode: 'B2C_USM0025' });
  });

  it('links a web user through the bot: code, /start <code>, an answer in the user’s language, then sign-in as that user', async () => {
    const email = nextEmail();
    const web = await signUpAndSignIn(base, { email, password: 'a quite long secret', databaseUrl: database.url });
    const state = await post(`${base}/api/user/tg`, {}, web.accessToken);
    expect(await state.json()).toEqual({ linked: false, telegram: null, botUsername: TEST_BOT_USERNAME, notifications: true });
    expect((await profileOf(web.accessToken)).tgAuth).toBe(false);

    const codeAnswer = await post(`${base}/api/user/tg/code`, {}, web.accessToken);
    expect(codeAnswer.status).toBe(200);
    const { code, url } = (await codeAnswer.json()) as { code: string; url: string };
    expect(url).toBe(`https://t.me/${TEST_BOT_USERNAME}?start=${code}`);
    expect(code).toMatch(/^[A-Za-z0-9_-]{16,64}$/);

    const user = newTelegramUser({ language_code: 'ru' });
    // Telegram's secret-token header is required.
    expect((await postUpdate(base, startUpdate(user, code), 'wrong-secret-0000000000')).status).toBe(401);
    expect((await postUpdate(base, startUpdate(user, code))).status).toBe(200);
    expect(await botMessagesTo(base, user.id)).toEqual([expect.stringContaining('привязан')]);

    expect(await (await post(`${base}/api/user/tg`, {}, web.accessToken)).json()).toMatchObject({ linked: true, telegram: { id: user.id, username: user.username } });
    expect((await profileOf(web.accessToken)).tgAuth).toBe(true);
    // The account's e-mail is told of the link the bot made.
    expect(await readMailLink(database.url, email, 'messenger_linked')).toBe(`${base}/auth/forgot`);
    const signedIn = (await (await authTg(initDataFor(user))).json()) as TokenUser;
    expect(signedIn.profile.sub).toBe(web.userId);

    // The code is spent: the bot says so, and the mini app's link login answers 0024.
    expect((await postUpdate(base, startUpdate(user, code))).status).toBe(200);
    expect((await botMessagesTo(base, user.id)).at(-1)).toContain('уже использована');
    const reused = await post(`${base}/api/auth/tg/link`, { oneTimeCode: code, tgCode: initDataFor(user) });
    expect(await reused.json()).toMatchObject({ exceptionCode: 'B2C_USM0024' });
  });

  it('links in the mini app with a link_token (linkTg), and refuses another account’s Telegram user with 0026', async () => {
    const web = await signUpAndSignIn(base, { email: nextEmail(), password: 'a quite long secret', databaseUrl: database.url });
    const { code } = (await (await post(`${base}/api/user/tg/code`, {}, web.accessToken)).json()) as { code: string };

    // A Telegram user who already has an account of their own cannot be linked to this one; the code stays usable.
    const owner = newTelegramUser();
    await authTg(initDataFor(owner));
    const taken = await post(`${base}/api/auth/tg/link`, { oneTimeCode: code, tgCode: initDataFor(owner) });
    expect(taken.status).toBe(409);
    expect(await taken.json()).toMatchObject({ exceptionCode: 'B2C_USM0026' });
    const viaBot = newTelegramUser();
    await postUpdate(base, startUpdate(owner, code));
    expect((await botMessagesTo(base, owner.id)).at(-1)).toContain('already linked to another');

    const forged = await post(`${base}/api/auth/tg/link`, { oneTimeCode: code, tgCode: forgedInitData(viaBot) });
    expect(await forged.json()).toMatchObject({ exceptionCode: 'B2C_USM0025' });
    const unknown = await post(`${base}/api/auth/tg/link`, { oneTimeCode: 'x'.repeat(43), tgCode: initDataFor(viaBot) });
    expect(await unknown.json()).toMatchObject({ exceptionCode: 'B2C_USM0025' });

    const linked = await post(`${base}/api/auth/tg/link`, { oneTimeCode: code, tgCode: initDataFor(viaBot) });
    expect(linked.status).toBe(200);
    expect(((await linked.json()) as TokenUser).profile.sub).toBe(web.userId);
  });

  it('links with init data while signed in, unlinks, and keeps a Telegram-only user from locking themselves out', async () => {
    const web = await signUpAndSignIn(base, { email: nextEmail(), password: 'a quite long secret', databaseUrl: database.url });
    const user = newTelegramUser();
    const linked = await post(`${base}/api/user/tg/link`, { tgCode: initDataFor(user) }, web.accessToken);
    expect(await linked.json()).toMatchObject({ linked: true, telegram: { id: user.id } });
    const stale = await post(`${base}/api/user/tg/link`, { tgCode: initDataFor(newTelegramUser(), { ageS: 7200 }) }, web.accessToken);
    expect(await stale.json()).toMatchObject({ exceptionCode: 'B2C_USM0023' });
    const unlinked = await post(`${base}/api/user/tg/unlink`, {}, web.accessToken);
    expect(await unlinked.json()).toMatchObject({ linked: false, telegram: null });
    // Unlinked, the Telegram user is a stranger again: a new account of their own.
    const fresh = (await (await authTg(initDataFor(user))).json()) as TokenUser;
    expect(fresh.profile.sub).not.toBe(web.userId);
    const refused = await post(`${base}/api/user/tg/unlink`, {}, fresh.access_token);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ exceptionCode: 'TG_UNLINK_LAST_SIGN_IN' });

    for (const path of ['/api/user/tg', '/api/user/tg/code', '/api/user/tg/link', '/api/user/tg/unlink']) expect((await post(`${base}${path}`, {})).status).toBe(401);
  });

  it('asks for the passcode or a fresh sign-in to link and unlink, mails every link, and a password reset ends the links', async () => {
    const email = nextEmail();
    const web = await signUpAndSignIn(base, { email, password: 'a quite long secret', databaseUrl: database.url });
    // A token as a thief holds it: valid, but from a sign-in 10 minutes ago (its refresh keeps the auth_time).
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    await db.query(
      `UPDATE oidc_payload SET payload = jsonb_set(payload, '{authTime}', to_jsonb(floor(extract(epoch FROM now()))::int - 600)) WHERE type = 'RefreshToken' AND payload->>'accountId' = $1`,
      [web.userId],
    );
    await db.end();
    const stolen = await refresh(base, web.refreshToken);
    expect(Math.floor(Date.now() / 1000) - Number(decodeJwt(stolen.accessToken).auth_time)).toBeGreaterThanOrEqual(600);
    expect(Math.abs(Math.floor(Date.now() / 1000) - Number(decodeJwt(web.accessToken).auth_time))).toBeLessThan(60);

    const thief = newTelegramUser();
    for (const [path, body] of [['/api/user/tg/code', {}], ['/api/user/tg/link', { tgCode: initDataFor(thief) }], ['/api/user/tg/unlink', {}]] as const) {
      const refused = await post(`${base}${path}`, body, stolen.accessToken);
      expect(refused.status, path).toBe(403);
      expect(await refused.json()).toMatchObject({ exceptionCode: 'RECENT_SIGN_IN_REQUIRED', message: expect.any(String) });
    }
    expect((await profileOf(web.accessToken)).tgAuth).toBe(false);

    // With the passcode on, the passcode is what counts, whatever the sign-in's age.
    const withPin = (token: string, path: string, body: unknown, pincode?: string) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(pincode ? { pincode } : {}) }, body: JSON.stringify(body) });
    expect((await withPin(web.accessToken, '/api/user/pinCode/enable', { pinCode: '2580' })).status).toBe(200);
    const fresh = await post(`${base}/api/user/tg/code`, {}, web.accessToken);
    expect(await fresh.json()).toMatchObject({ exceptionCode: 'B2C_USM0031' });
    expect(await (await withPin(stolen.accessToken, '/api/user/tg/link', { tgCode: initDataFor(thief) }, '1111')).json()).toMatchObject({ exceptionCode: 'B2C_USM0031' });
    const mine = newTelegramUser();
    const linked = await withPin(stolen.accessToken, '/api/user/tg/link', { tgCode: initDataFor(mine) }, '2580');
    expect(await linked.json()).toMatchObject({ linked: true, telegram: { id: mine.id } });
    // The e-mail hears of the link, with the way to end it.
    expect(new URL(await readMailLink(database.url, email, 'messenger_linked')).pathname).toBe('/auth/forgot');
    const minted = await withPin(web.accessToken, '/api/user/tg/code', {}, '2580');
    expect(minted.status).toBe(200);
    const { code: pendingCode } = (await minted.json()) as { code: string };

    // A password reset takes the account back: the link made since the password was set ends with it.
    expect((await authTg(initDataFor(mine)).then((r) => r.json()) as TokenUser).profile.sub).toBe(web.userId);
    await post(`${base}/api/password-reset`, { email });
    const code = codeFromLink(await readMailLink(database.url, email, 'reset_password'));
    expect((await post(`${base}/api/password-reset/confirm`, { password: 'another long secret', confirmationCode: code })).status).toBe(200);
    const after = await signIn(base, { email, password: 'another long secret' });
    expect((await profileOf(after.accessToken)).tgAuth).toBe(false);
    expect(((await (await authTg(initDataFor(mine))).json()) as TokenUser).profile.sub).not.toBe(web.userId);
    // A link code minted with the old session before the reset links nobody after it.
    const late = await post(`${base}/api/auth/tg/link`, { oneTimeCode: pendingCode, tgCode: initDataFor(newTelegramUser()) });
    expect(late.status).toBe(401);
    expect(await late.json()).toMatchObject({ exceptionCode: 'B2C_USM0025' });
  });

  it('keeps the development init data off while a real bot token is set', async () => {
    expect((await fetch(`${base}/api/tg/dev/init-data`)).status).toBe(404);
    expect((await fetch(`${base}/sandbox/telegram/start?code=abc`)).status).toBe(404);
  });
});

describe('the development mode without a bot token', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let base: string;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startInProcess({ ...testServerEnv(database.url), PORT: String(port), PUBLIC_URL: base });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('signs init data for a test Telegram user with a generated token, and plays the bot for linking', async () => {
    const dev = (await (await fetch(`${base}/api/tg/dev/init-data?id=777&language_code=ru`)).json()) as { initData: string; user: { id: number } };
    expect(dev.user.id).toBe(777);
    const params = new URLSearchParams(dev.initData);
    expect(params.get('signature')).toMatch(/^[A-Za-z0-9_-]{86}$/);
    const signedIn = await post(`${base}/api/auth/tg`, { initData: dev.initData });
    expect(signedIn.status).toBe(200);
    const stale = (await (await fetch(`${base}/api/tg/dev/init-data?age=4000`)).json()) as { initData: string };
    expect(await (await post(`${base}/api/auth/tg`, { initData: stale.initData })).json()).toMatchObject({ exceptionCode: 'B2C_USM0023' });

    const web = await signUpAndSignIn(base, { email: `dev-${Date.now()}@example.com`, password: 'a quite long secret', databaseUrl: database.url });
    const { url } = (await (await post(`${base}/api/user/tg/code`, {}, web.accessToken)).json()) as { url: string };
    expect(url).toMatch(new RegExp(`^${base}/sandbox/telegram/start\\?code=`));
    const page = await (await fetch(`${url}&id=888`)).text();
    expect(page).toContain('linked to your wallet');
    const other = (await (await fetch(`${base}/api/tg/dev/init-data?id=888`)).json()) as { initData: string };
    expect(((await (await post(`${base}/api/auth/tg`, { initData: other.initData })).json()) as TokenUser).profile.sub).toBe(web.userId);
  });
});
