import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';

type Answer = { status: number; body: { exceptionCode?: string; id?: string } | undefined };

/** 'Leave feedback' (SPEC §2 Settings, issue 19 item 3): kept in PostgreSQL and mailed to SUPPORT_EMAIL through the outbox. */
describe('leave feedback', () => {
  const SUPPORT = 'help@wallet.example';
  let database: TestDatabase;
  let server: InProcessServer;
  let db: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    server = await startInProcess({ ...testServerEnv(database.url), PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(port), SUPPORT_EMAIL: SUPPORT, SUPPORT_TELEGRAM: '@wallet_support' });
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await server?.close();
    await database?.drop();
  });

  it('keeps the message, mails it to support with the reply address, and refuses what is not a message', async () => {
    const email = `feedback-${Date.now()}@example.com`;
    const user = await signUpAndSignIn(server.url, { email, password: 'a quite long secret', databaseUrl: database.url });
    const post = (body: unknown) => gatewayClient<Answer['body']>(server.url, { headers: { 'content-type': 'application/json' } })(user, 'POST', '/api/user/feedback', body) as Promise<Answer>;

    const sent = await post({ text: '  The swap screen is great <3  ', email });
    expect(sent.status).toBe(201);
    const kept = await db.query<{ text: string; reply_to: string | null; mailed: boolean }>('SELECT text, reply_to, mailed_at IS NOT NULL AS mailed FROM feedback WHERE id = $1', [sent.body?.id]);
    expect(kept.rows).toEqual([{ text: 'The swap screen is great <3', reply_to: email, mailed: true }]);
    const mail = await db.query<{ subject: string; text: string; html: string }>(`SELECT subject, text, html FROM mail_outbox WHERE recipient = $1 AND kind = 'feedback'`, [SUPPORT]);
    expect(mail.rows).toHaveLength(1);
    expect(mail.rows[0]?.subject).toBe(`Wallet feedback from ${email}`);
    expect(mail.rows[0]?.text).toContain('The swap screen is great <3');
    expect(mail.rows[0]?.html).toContain('great &lt;3');

    // Without an address it is still kept; the mail names the account.
    expect((await post({ text: 'No answer needed', email: '' })).status).toBe(201);
    expect((await db.query(`SELECT 1 FROM feedback WHERE reply_to IS NULL AND text = 'No answer needed'`)).rowCount).toBe(1);

    for (const bad of [{ text: '   ' }, { text: 'x'.repeat(2001) }, { text: 'hello', email: 'not an e-mail' }, {}]) {
      const refused = await post(bad);
      expect([refused.status, refused.body?.exceptionCode]).toEqual([400, 'VALIDATION']);
    }
    const anonymous = await fetch(`${server.url}/api/user/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hi' }) });
    expect(anonymous.status).toBe(401);
  });

  it('tells the browser where the support chat is', async () => {
    const config = (await (await fetch(`${server.url}/api/client-config`)).json()) as { supportTelegram?: string };
    expect(config.supportTelegram).toBe('https://t.me/wallet_support');
  });
});
