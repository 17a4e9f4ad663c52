import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createHash } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort, launchServer, type LaunchedServer } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';

const PASSWORD = 'a quite long secret';

type Answer = { status: number; body: { exceptionCode?: string; message?: string } & Record<string, unknown> };

/**
 * The passcode (SPEC §5, §6, §8) against two gateway processes sharing one PostgreSQL: the lockout steps
 * B2C_USM0031 → 0030 (a wait that grows) → 0032 are counted in the database, so they hold across processes and a
 * restart. A lock's wait is run out by moving `locked_until` into the past: the test's clock, not a sleep. One
 * gateway runs in this process (measured by coverage), the other is a process of its own, the one restarted: what
 * one gateway holds in memory, the other cannot see.
 */
describe('passcode and e-mail change', () => {
  let database: TestDatabase;
  let a: InProcessServer;
  let b: LaunchedServer;
  let publicUrl: string;
  let env: Record<string, string>;
  let db: pg.Client;
  let seq = 0;

  const call = async (server: { url: string }, user: SignedInUser, path: string, options: { pincode?: string; body?: unknown } = {}): Promise<Answer> => {
    const read = path === '/user';
    const headers: Record<string, string> = options.pincode === undefined ? {} : { pincode: options.pincode };
    const answer = await gatewayClient<Answer['body'] | undefined>(server.url, { headers: { 'content-type': 'application/json' } })(user, read ? 'GET' : 'POST', `/api${path}`, read ? undefined : (options.body ?? {}), headers);
    return { status: answer.status, body: answer.body ?? {} };
  };

  const newUser = async (): Promise<SignedInUser & { email: string }> => {
    seq += 1;
    const email = `pin-${seq}-${Date.now()}@example.com`;
    const user = await signUpAndSignIn(a.url, { email, password: PASSWORD, databaseUrl: database.url });
    const row = await db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [email]);
    return { ...user, userId: row.rows[0]?.id ?? '', email };
  };

  const state = async (userId: string) => {
    const row = await db.query<{ failures: number; wait: number | null; blocked: boolean }>(
      `SELECT failures, extract(epoch FROM locked_until - now())::float8 AS wait, blocked_at IS NOT NULL AS blocked FROM user_pincodes WHERE user_id = $1`,
      [userId],
    );
    return row.rows[0];
  };
  /** The wait has passed, as far as the gateway can tell. */
  const runOutWait = (userId: string) => db.query(`UPDATE user_pincodes SET locked_until = now() - interval '1 second' WHERE user_id = $1 AND locked_until IS NOT NULL`, [userId]);

  const mailedCode = async (to: string, kind: string, after = 0): Promise<{ code: string; id: number }> => {
    for (let i = 0; i < 100; i += 1) {
      const rows = await db.query<{ id: string; text: string }>('SELECT id, text FROM mail_outbox WHERE recipient = $1 AND kind = $2 AND id > $3 ORDER BY id DESC LIMIT 1', [to, kind, after]);
      const row = rows.rows[0];
      const code = row?.text.match(/^([A-Z0-9]{4})$/m)?.[1];
      if (row && code) return { code, id: Number(row.id) };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no ${kind} mail to ${to}`);
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    // Two processes behind one public address, as behind a load balancer, on the same seed and secrets key.
    // The per-address mail cap (MAIL_RATE_LIMIT, tested in limits.test.ts) would stop the code mails counted here first.
    env = { ...testServerEnv(database.url), PUBLIC_URL: publicUrl, MAIL_RATE_LIMIT: '100' };
    a = await startInProcess({ ...env, PORT: String(port) });
    b = await launchServer(env);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await a?.close();
    await b?.stop();
    await database?.drop();
  });

  it('sets a passcode of exactly four digits, once, and GET /user shows it', async () => {
    const user = await newUser();
    expect((await call(a, user, '/user')).body.pinCodeActive).toBe(false);
    for (const bad of ['123', '12345', '12a4', '']) {
      const answer = await call(a, user, '/user/pinCode/enable', { body: { pinCode: bad } });
      expect(answer.status).toBe(400);
      expect(answer.body.exceptionCode).toBe('VALIDATION');
    }
    expect((await call(a, user, '/user/pinCode/enable', { body: {} })).body.exceptionCode).toBe('VALIDATION');
    expect((await call(a, user, '/user/pinCode/validate', { pincode: '1234' })).body.exceptionCode).toBe('PINCODE_NOT_ACTIVE');
    expect((await call(a, user, '/user/pinCode/enable', { body: { pinCode: '2580' } })).status).toBe(200);
    expect((await call(b, user, '/user')).body.pinCodeActive).toBe(true);
    const again = await call(b, user, '/user/pinCode/enable', { body: { pinCode: '1111' } });
    expect([again.status, again.body.exceptionCode]).toEqual([409, 'PINCODE_ACTIVE']);
    const hash = await db.query<{ pin_hash: string }>('SELECT pin_hash FROM user_pincodes WHERE user_id = $1', [user.userId]);
    expect(hash.rows[0]?.pin_hash).toMatch(/^\$argon2id\$/);
    expect((await call(b, user, '/user/pinCode/validate', { pincode: '2580' })).body).toEqual({ valid: true });
  });

  it('counts wrong codes across two processes and a restart: 0031, then 0030 with a growing wait, then 0032 until reset by e-mail', async () => {
    const user = await newUser();
    await call(a, user, '/user/pinCode/enable', { body: { pinCode: '2580' } });
    const servers = () => [a, b];

    // A missing or malformed code guesses nothing: refused as wrong, but no try is used up.
    for (const options of [{}, { pincode: '12a4' }, { pincode: '12345' }]) {
      const answer = await call(a, user, '/user/pinCode/validate', options);
      expect([answer.status, answer.body.exceptionCode]).toEqual([403, 'B2C_USM0031']);
    }
    expect((await state(user.userId))?.failures).toBe(0);

    // Four wrong codes in a row, alternating processes.
    for (let i = 0; i < 4; i += 1) {
      const answer = await call(servers()[i % 2] as { url: string }, user, '/user/pinCode/validate', { pincode: '0000' });
      expect([answer.status, answer.body.exceptionCode]).toEqual([403, 'B2C_USM0031']);
    }
    expect((await state(user.userId))?.failures).toBe(4);

    // The fifth: a wait of 30 s; while it runs even the right code is refused, uncounted.
    const fifth = await call(a, user, '/user/pinCode/validate', { pincode: '0000' });
    expect([fifth.status, fifth.body.exceptionCode]).toEqual([429, 'B2C_USM0030']);
    expect(fifth.body.message).toMatch(/Try again in \d+ s/);
    const first = await state(user.userId);
    expect(first?.wait).toBeGreaterThan(25);
    expect(first?.wait).toBeLessThanOrEqual(30);
    const during = await call(b, user, '/user/pinCode/validate', { pincode: '2580' });
    expect(during.body.exceptionCode).toBe('B2C_USM0030');
    expect((await state(user.userId))?.failures).toBe(5);

    // A restart of one process changes nothing: the count and the lock are in PostgreSQL.
    await b.stop();
    b = await launchServer({ ...env, PORT: String(b.port) });
    expect((await call(b, user, '/user/pinCode/validate', { pincode: '2580' })).body.exceptionCode).toBe('B2C_USM0030');

    // Each further wrong code after a wait: a longer wait.
    let previous = first?.wait ?? 0;
    for (let failures = 6; failures <= 9; failures += 1) {
      await runOutWait(user.userId);
      const answer = await call(servers()[failures % 2] as { url: string }, user, '/user/pinCode/validate', { pincode: '1111' });
      expect(answer.body.exceptionCode).toBe('B2C_USM0030');
      const now = await state(user.userId);
      expect(now?.failures).toBe(failures);
      expect(now?.wait).toBeGreaterThan(previous * 1.5);
      previous = now?.wait ?? 0;
    }

    // The tenth: blocked. The right code no longer helps, on either process, after any wait.
    await runOutWait(user.userId);
    const tenth = await call(b, user, '/user/pinCode/validate', { pincode: '1111' });
    expect([tenth.status, tenth.body.exceptionCode]).toEqual([423, 'B2C_USM0032']);
    await runOutWait(user.userId);
    for (const server of servers()) expect((await call(server, user, '/user/pinCode/validate', { pincode: '2580' })).body.exceptionCode).toBe('B2C_USM0032');
    expect((await call(a, user, '/user/email-change', { pincode: '2580', body: { newEmail: `other-${Date.now()}@example.com` } })).body.exceptionCode).toBe('B2C_USM0032');
    expect((await state(user.userId))?.blocked).toBe(true);

    // Reset through e-mail: a code to the account's address turns the passcode off.
    expect((await call(a, user, '/user/pinCode/reset')).status).toBe(200);
    const { code } = await mailedCode(user.email, 'pincode_reset');
    expect((await call(b, user, '/user/pinCode/reset/confirm', { body: { confirmationCode: 'ZZZZ' } })).body.exceptionCode).toBe('CONFIRMATION_INVALID');
    expect((await call(b, user, '/user/pinCode/reset/confirm', { body: { confirmationCode: code.toLowerCase() } })).status).toBe(200);
    expect((await call(a, user, '/user')).body.pinCodeActive).toBe(false);
    expect((await call(a, user, '/user/pinCode/enable', { body: { pinCode: '4321' } })).status).toBe(200);
    expect((await call(b, user, '/user/pinCode/validate', { pincode: '4321' })).status).toBe(200);
  });

  it('kills a passcode-reset code after five wrong tries or fifteen minutes, mails five a day, and keeps them where no guess can be checked offline', async () => {
    const user = await newUser();
    await call(a, user, '/user/pinCode/enable', { body: { pinCode: '2580' } });
    // Blocked as after the last step of the lockout (the test above walks the steps themselves).
    await db.query('UPDATE user_pincodes SET blocked_at = now() WHERE user_id = $1', [user.userId]);
    expect((await call(a, user, '/user/pinCode/reset')).status).toBe(200);
    const first = await mailedCode(user.email, 'pincode_reset');

    // Every code of the alphabet hashed as the table used to keep them: none matches what it keeps now.
    const stored = (await db.query<{ hash: string }>('SELECT reset_code_hash AS hash FROM user_pincodes WHERE user_id = $1', [user.userId])).rows[0]?.hash ?? '';
    expect(stored).not.toBe('');
    const alphabet = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
    let found: string | undefined;
    for (const x of alphabet) {
      for (const y of alphabet) for (const z of alphabet) for (const w of alphabet) if (createHash('sha256').update(x + y + z + w).digest('hex') === stored) found = x + y + z + w;
      // Lets the HTTP client see connections the servers closed meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(found).toBeUndefined();

    const wrong = first.code === 'ZZZZ' ? 'YYYY' : 'ZZZZ';
    for (let i = 0; i < 5; i += 1) {
      expect((await call(i % 2 ? a : b, user, '/user/pinCode/reset/confirm', { body: { confirmationCode: wrong } })).body.exceptionCode).toBe('CONFIRMATION_INVALID');
    }
    expect((await call(a, user, '/user/pinCode/reset/confirm', { body: { confirmationCode: first.code } })).body.exceptionCode).toBe('CONFIRMATION_INVALID');
    expect((await state(user.userId))?.blocked).toBe(true);

    // A new code (the 59 s wait run out on the test's clock) works once more, but not past its fifteen minutes.
    await db.query(`UPDATE user_pincodes SET reset_expires_at = reset_expires_at - interval '1 minute' WHERE user_id = $1`, [user.userId]);
    expect((await call(b, user, '/user/pinCode/reset')).status).toBe(200);
    const second = await mailedCode(user.email, 'pincode_reset', first.id);
    const expires = await db.query<{ minutes: number }>(`SELECT extract(epoch FROM reset_expires_at - now()) / 60 AS minutes FROM user_pincodes WHERE user_id = $1`, [user.userId]);
    expect(Number(expires.rows[0]?.minutes)).toBeLessThanOrEqual(15);
    await db.query(`UPDATE user_pincodes SET reset_expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.userId]);
    expect((await call(a, user, '/user/pinCode/reset/confirm', { body: { confirmationCode: second.code } })).body.exceptionCode).toBe('CONFIRMATION_INVALID');
    expect((await state(user.userId))?.blocked).toBe(true);

    // Five codes a day: 25 guesses, not one code every 59 s. A day later the count starts over.
    const sendAfterWait = async () => {
      await db.query(`UPDATE user_pincodes SET reset_expires_at = now() - interval '1 minute' WHERE user_id = $1`, [user.userId]);
      return call(a, user, '/user/pinCode/reset');
    };
    for (let i = 3; i <= 5; i += 1) expect((await sendAfterWait()).status).toBe(200);
    const capped = await sendAfterWait();
    expect(capped.status).toBe(429);
    expect(capped.body.exceptionCode).toBe('TOO_MANY_CODES');
    await db.query(`UPDATE user_pincodes SET reset_sends_since = now() - interval '1 day 1 second' WHERE user_id = $1`, [user.userId]);
    expect((await sendAfterWait()).status).toBe(200);
    const last = await mailedCode(user.email, 'pincode_reset', second.id);
    expect((await call(b, user, '/user/pinCode/reset/confirm', { body: { confirmationCode: last.code } })).status).toBe(200);
    expect((await call(a, user, '/user')).body.pinCodeActive).toBe(false);
  });

  it('counts parallel guesses on two processes exactly: only four can ever be told "incorrect"', async () => {
    const user = await newUser();
    await call(a, user, '/user/pinCode/enable', { body: { pinCode: '2580' } });
    const guesses = Array.from({ length: 16 }, (_, i) => call(i % 2 ? a : b, user, '/user/pinCode/validate', { pincode: String(1000 + i) }));
    const answers = await Promise.all(guesses);
    const codes = answers.map((answer) => answer.body.exceptionCode);
    expect(codes.filter((code) => code === 'B2C_USM0031')).toHaveLength(4);
    expect(codes.every((code) => code === 'B2C_USM0031' || code === 'B2C_USM0030' || code === 'B2C_USM0032')).toBe(true);
    // The fifth counted guess locked the passcode; every later one was refused by the lock before any check.
    expect((await state(user.userId))?.failures).toBe(5);
  });

  it('changes and disables the passcode only with the current one; a right code clears the count', async () => {
    const user = await newUser();
    await call(a, user, '/user/pinCode/enable', { body: { pinCode: '2580' } });
    expect((await call(a, user, '/user/pinCode/validate', { pincode: '9999' })).body.exceptionCode).toBe('B2C_USM0031');
    expect((await call(b, user, '/user/pinCode/change', { pincode: '9999', body: { pinCode: '1357' } })).body.exceptionCode).toBe('B2C_USM0031');
    expect((await call(b, user, '/user/pinCode/change', { pincode: '2580', body: { pinCode: '13a7' } })).body.exceptionCode).toBe('VALIDATION');
    expect((await state(user.userId))?.failures).toBe(2);
    expect((await call(b, user, '/user/pinCode/change', { pincode: '2580', body: { pinCode: '1357' } })).status).toBe(200);
    expect((await state(user.userId))?.failures).toBe(0);
    expect((await call(a, user, '/user/pinCode/validate', { pincode: '2580' })).body.exceptionCode).toBe('B2C_USM0031');
    expect((await call(a, user, '/user/pinCode/disable')).body.exceptionCode).toBe('B2C_USM0031');
    expect((await call(a, user, '/user/pinCode/disable', { pincode: '2580' })).body.exceptionCode).toBe('B2C_USM0031');
    expect((await call(a, user, '/user')).body.pinCodeActive).toBe(true);
    expect((await call(a, user, '/user/pinCode/disable', { pincode: '1357' })).status).toBe(200);
    expect((await call(b, user, '/user')).body.pinCodeActive).toBe(false);
    expect((await call(b, user, '/user/pinCode/disable', { pincode: '1357' })).body.exceptionCode).toBe('PINCODE_NOT_ACTIVE');
  });

  it('changes the e-mail only with the right passcode, proving the old address and then the new one', async () => {
    const user = await newUser();
    const next = `new-${Date.now()}@example.com`;
    await call(a, user, '/user/pinCode/enable', { body: { pinCode: '2580' } });
    // Refused without the passcode, or with a wrong one; nothing is mailed.
    expect((await call(a, user, '/user/email-change', { body: { newEmail: next } })).body.exceptionCode).toBe('B2C_USM0031');
    expect((await call(b, user, '/user/email-change', { pincode: '1111', body: { newEmail: next } })).body.exceptionCode).toBe('B2C_USM0031');
    expect((await db.query('SELECT 1 FROM email_changes WHERE user_id = $1', [user.userId])).rowCount).toBe(0);
    expect((await call(a, user, '/user/email-change', { pincode: '2580', body: { newEmail: 'not an e-mail' } })).body.exceptionCode).toBe('VALIDATION');
    expect((await call(a, user, '/user/email-change', { pincode: '2580', body: { newEmail: 'someone@telegram.org' } })).body.exceptionCode).toBe('VALIDATION');
    expect((await call(a, user, '/user/email-change', { pincode: '2580', body: { newEmail: user.email } })).body.exceptionCode).toBe('EMAIL_SAME');

    // The body's pinCode works as well as the header.
    const started = await call(a, user, '/user/email-change', { body: { newEmail: next.toUpperCase(), pinCode: '2580' } });
    expect(started.body).toEqual({ stage: 'old' });
    const old = await mailedCode(user.email, 'email_change_old');
    expect((await call(b, user, '/user/email-change/confirm', { body: { confirmationCode: 'AB1' } })).body.exceptionCode).toBe('VALIDATION');
    expect((await call(b, user, '/user/email-change/confirm', { body: { confirmationCode: old.code === 'AAAA' ? 'BBBB' : 'AAAA' } })).body.exceptionCode).toBe('CONFIRMATION_INVALID');
    expect((await call(b, user, '/user/email-change/confirm', { body: { confirmationCode: old.code } })).body).toEqual({ stage: 'new' });
    const first = await mailedCode(next, 'email_change_new');

    // A resent code replaces the first one.
    expect((await call(a, user, '/user/email-change/resend-confirmation', { body: {} })).body).toEqual({ stage: 'new' });
    const second = await mailedCode(next, 'email_change_new', first.id);
    if (first.code !== second.code) expect((await call(a, user, '/user/email-change/confirm', { body: { confirmationCode: first.code } })).body.exceptionCode).toBe('CONFIRMATION_INVALID');
    const done = await call(a, user, '/user/email-change/confirm', { body: { confirmationCode: second.code } });
    expect(done.body).toEqual({ stage: 'done', email: next });
    expect((await call(b, user, '/user')).body.email).toBe(next);
    expect((await call(b, user, '/user/email-change/confirm', { body: { confirmationCode: second.code } })).body.exceptionCode).toBe('CONFIRMATION_INVALID');
    expect((await call(b, user, '/user/email-change/resend-confirmation')).body.exceptionCode).toBe('NO_EMAIL_CHANGE');
  });

  it('adds an e-mail straight to the new address when the account has none (messenger addresses count as none)', async () => {
    const user = await newUser();
    await db.query(`UPDATE users SET email = $2 WHERE id = $1`, [user.userId, `tg${Date.now()}@telegram.org`]);
    const next = `added-${Date.now()}@example.com`;
    expect((await call(a, user, '/user/email-change', { body: { newEmail: next } })).body).toEqual({ stage: 'new' });
    const { code } = await mailedCode(next, 'email_change_new');
    expect((await call(b, user, '/user/email-change/confirm', { body: { confirmationCode: code } })).body).toEqual({ stage: 'done', email: next });
  });
});
