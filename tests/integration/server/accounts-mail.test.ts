import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { startMailCatcher, type MailCatcher } from '../../support/smtp.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { codeFromLink, confirmEmail, signIn, signUp, signUpAndSignIn } from '../../support/auth.ts';

const PASSWORD = 'a quite long secret';

describe('mail through SMTP_URL', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let smtp: MailCatcher;
  const waitForMail = (to: string, subject: RegExp) => smtp.waitForMail(to, subject);

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    smtp = await startMailCatcher();
    const port = await freePort();
    server = await startInProcess({ ...testServerEnv(database.url), PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, SMTP_URL: smtp.url });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await database?.drop();
  });

  it('sends the confirmation mail (text and HTML) and keeps no live link in the outbox', async () => {
    const email = `smtp-${Date.now()}@example.com`;
    await signUp(server.url, { email, password: PASSWORD });
    const mail = await waitForMail(email, /Confirm your e-mail/);
    expect(mail.raw).toContain('text/plain');
    expect(mail.raw).toContain('text/html');
    const link = /http:\/\/127\.0\.0\.1:\d+\/auth\/signup\/confirm\/[\w-]+/.exec(mail.raw)?.[0];
    expect(link).toBeTruthy();
    expect((await confirmEmail(server.url, codeFromLink(link ?? ''))).status).toBe(200);
    expect((await signIn(server.url, { email, password: PASSWORD })).accessToken).toBeTruthy();

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const rows = await db.query<{ status: string; text: string }>('SELECT status, text FROM mail_outbox WHERE recipient = $1', [email]);
      expect(rows.rows).toHaveLength(1);
      expect(rows.rows[0]?.status).toBe('sent');
      expect(rows.rows[0]?.text).not.toContain('/auth/signup/confirm/');
    } finally {
      await db.end();
    }
  });

  it('keeps no usable reset link in the outbox once the mail went to SMTP, delivered or refused', async () => {
    const email = `smtp-reset-${Date.now()}@example.com`;
    await signUp(server.url, { email, password: PASSWORD });
    const confirmation = await waitForMail(email, /Confirm your e-mail/);
    await confirmEmail(server.url, codeFromLink(/http:\/\/127\.0\.0\.1:\d+\/auth\/signup\/confirm\/[\w-]+/.exec(confirmation.raw)?.[0] ?? ''));
    const askReset = () => fetch(`${server.url}/api/password-reset`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
    expect((await askReset()).status).toBe(200);
    const delivered = await waitForMail(email, /\/auth\/forgot\//);

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const resetRows = () => db.query<{ status: string; text: string; html: string }>(`SELECT status, text, html FROM mail_outbox WHERE recipient = $1 AND kind = 'reset_password' ORDER BY id`, [email]);
      smtp.refuse = true;
      try {
        expect((await askReset()).status).toBe(200);
        for (let i = 0; i < 100 && !(await resetRows()).rows.some((row) => row.status === 'failed'); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        smtp.refuse = false;
      }
      const rows = (await resetRows()).rows;
      expect(rows.map((row) => row.status)).toEqual(['sent', 'failed']);
      for (const row of rows) {
        expect(row.text).toContain('[link removed]');
        expect(`${row.text}${row.html}`).not.toMatch(/\/auth\/forgot\/[\w-]/);
      }
    } finally {
      await db.end();
    }
    // The link that reached the mailbox was live all along: only the outbox's copy is dead.
    const link = /http:\/\/127\.0\.0\.1:\d+\/auth\/forgot\/[\w-]+/.exec(delivered.raw)?.[0] ?? '';
    const reset = await fetch(`${server.url}/api/password-reset/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ confirmationCode: codeFromLink(link), password: `${PASSWORD} again` }),
    });
    expect(reset.status).toBe(200);
  });

  it('sends the reset mail in the user’s language', async () => {
    const email = `smtp-ru-${Date.now()}@example.com`;
    await signUp(server.url, { email, password: PASSWORD });
    const confirmation = await waitForMail(email, /Confirm your e-mail/);
    const link = /http:\/\/127\.0\.0\.1:\d+\/auth\/signup\/confirm\/[\w-]+/.exec(confirmation.raw)?.[0] ?? '';
    await confirmEmail(server.url, codeFromLink(link));
    const tokens = await signIn(server.url, { email, password: PASSWORD });
    await fetch(`${server.url}/api/user/language/RUS`, { method: 'POST', headers: { authorization: `Bearer ${tokens.accessToken}` } });
    await fetch(`${server.url}/api/password-reset`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
    // The subject is MIME-encoded UTF-8; the link and the language attribute of the HTML part are plain.
    const reset = await waitForMail(email, /\/auth\/forgot\//);
    expect(reset.raw).toContain('lang="ru"');
  });
});

describe('an external OpenID issuer replaces the embedded one', () => {
  let issuerDb: TestDatabase;
  let gatewayDb: TestDatabase;
  let issuer: InProcessServer;
  let gateway: InProcessServer;

  beforeAll(async () => {
    [issuerDb, gatewayDb] = await Promise.all([createTestDatabase(inject('adminDatabaseUrl')), createTestDatabase(inject('adminDatabaseUrl'))]);
    const issuerPort = await freePort();
    let gatewayPort = await freePort();
    while (gatewayPort === issuerPort) gatewayPort = await freePort();
    const issuerUrl = `http://127.0.0.1:${issuerPort}`;
    issuer = await startInProcess({ ...testServerEnv(issuerDb.url), PORT: String(issuerPort), PUBLIC_URL: issuerUrl });
    // The gateway trusts the first server's provider as an operator would trust Keycloak.
    gateway = await startInProcess({
      ...testServerEnv(gatewayDb.url),
      PORT: String(gatewayPort),
      PUBLIC_URL: `http://127.0.0.1:${gatewayPort}`,
      OIDC_ISSUER: `${issuerUrl}/oidc`,
      OIDC_AUDIENCE: `${issuerUrl}/api`,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await issuer?.close();
    await Promise.all([issuerDb?.drop(), gatewayDb?.drop()]);
  });

  it('verifies the issuer’s tokens through discovery and gives the subject a user of its own', async () => {
    const config = (await (await fetch(`${gateway.url}/api/client-config`)).json()) as { oidc: { authority: string } };
    expect(config.oidc.authority).toBe(`${issuer.url}/oidc`);
    const embedded = await fetch(`${gateway.url}/oidc/.well-known/openid-configuration`);
    expect(embedded.headers.get('content-type') ?? '').not.toContain('json');
    const email = `external-${Date.now()}@example.com`;
    const user = await signUpAndSignIn(issuer.url, { email, password: PASSWORD, databaseUrl: issuerDb.url });
    const first = await fetch(`${gateway.url}/api/user`, { headers: { authorization: `Bearer ${user.accessToken}` } });
    expect(first.status).toBe(200);
    const profile = (await first.json()) as { accounts: Array<{ id: string }> };
    expect(profile.accounts).toHaveLength(1);
    const again = (await (await fetch(`${gateway.url}/api/user`, { headers: { authorization: `Bearer ${user.accessToken}` } })).json()) as { accounts: Array<{ id: string }> };
    expect(again.accounts[0]?.id).toBe(profile.accounts[0]?.id);
  });
});
