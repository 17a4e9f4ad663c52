import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort, launchServer, type LaunchedServer } from '../../support/server.ts';
import { finishAuthorization, signUpAndSignIn, startAuthorization, submitLogin, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures } from '../../support/custody.ts';
import { COMMAND_LINE } from '../../../src/server/domain/operator/actor.ts';
import { grantRole, revokeRole } from '../../../src/server/domain/operator/roles.ts';
import { refuseFrozenWithdrawals } from '../../../src/server/domain/withdrawal-freeze.ts';
import { balancesOf } from '../../../src/server/domain/ledger.ts';

type Body = Record<string, unknown> & { exceptionCode?: string; result?: string };

/** The operator console's gateway (issue 30 item 1): roles read from the database, four eyes, the audit log. */
describe('the operator console', () => {
  let database: TestDatabase;
  let server: LaunchedServer;
  let pool: pg.Pool;
  const call = gatewayClient<Body>(() => server.url);
  const password = 'a quite long secret';
  const stamp = Date.now();
  const people = {} as Record<'admin' | 'finance1' | 'finance2' | 'support' | 'user', SignedInUser & { email: string }>;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    server = await launchServer({ DATABASE_URL: database.url, PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(port), AUTH_RATE_LIMIT: '0', MAIL_RATE_LIMIT: '0' });
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    for (const name of ['admin', 'finance1', 'finance2', 'support', 'user'] as const) {
      const email = `${name}-${stamp}@example.com`;
      people[name] = { ...(await signUpAndSignIn(server.url, { email, password, databaseUrl: database.url })), email };
    }
    await grantRole(pool, COMMAND_LINE, { email: people.admin.email, role: 'admin', reason: 'the first admin' });
  }, 120_000);
  afterAll(async () => {
    if (pool) expect(await auditFailures(pool)).toEqual([]);
    await pool?.end();
    await server?.stop();
    await database?.drop();
  });

  it('signs an operator in through its own client of the provider, and grants roles only as an admin', async () => {
    const start = await startAuthorization(server.url, '/api/operator/client-config');
    expect(start.config.oidc.clientId).toBe('operator-console');
    expect(start.config.oidc.redirectUri).toBe(`${server.url}/operator/callback`);
    const tokens = await finishAuthorization(server.url, start, await submitLogin(server.url, start, { email: people.admin.email, password }));
    const me = await call(tokens, 'GET', '/api/operator/me');
    expect([me.status, me.body.role, me.body.email]).toEqual([200, 'admin', people.admin.email]);

    for (const [name, role] of [['finance1', 'finance'], ['finance2', 'finance'], ['support', 'support']] as const) {
      expect((await call(tokens, 'POST', '/api/operator/roles', { email: people[name].email, role, reason: 'on duty' })).status).toBe(200);
    }
    const refused = await call(people.finance1, 'POST', '/api/operator/roles', { email: people.user.email, role: 'admin' });
    expect([refused.status, refused.body.exceptionCode]).toEqual([403, 'FORBIDDEN']);
    const own = await call(tokens, 'POST', '/api/operator/roles/revoke', { email: people.admin.email });
    expect([own.status, own.body.exceptionCode]).toEqual([409, 'OPERATOR_OWN_ROLE']);
    const listed = await call<{ operators: { email: string; role: string }[] }>(tokens, 'GET', '/api/operator/roles');
    expect(listed.body.operators.map((o) => [o.email, o.role]).sort()).toEqual(
      [[people.admin.email, 'admin'], [people.finance1.email, 'finance'], [people.finance2.email, 'finance'], [people.support.email, 'support']].sort(),
    );
  });

  it('refuses every operator route to a user without a role (403) and to nobody (401), and finance routes to support', async () => {
    const account = people.user.accountId;
    const id = '00000000-0000-4000-8000-000000000000';
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/operator/me'], ['GET', '/api/operator/search?q=x'], ['GET', `/api/operator/users/${people.user.userId}`], ['GET', `/api/operator/users/${people.user.userId}/ledger`],
      ['POST', `/api/operator/accounts/${account}/freeze`, { reason: 'because' }], ['POST', `/api/operator/accounts/${account}/unfreeze`, { reason: 'because' }],
      ['GET', '/api/operator/adjustments'], ['POST', '/api/operator/adjustments', { account, kind: 'CREDIT', currency: 'BTC', amount: '1', reason: 'because' }],
      ['POST', `/api/operator/adjustments/${id}/approve`, {}], ['POST', `/api/operator/adjustments/${id}/reject`, { reason: 'because' }],
      ['GET', '/api/operator/mail'], ['POST', '/api/operator/mail/1/resend', {}], ['GET', '/api/operator/stuck'], ['GET', '/api/operator/audit'],
      ['GET', '/api/operator/roles'], ['POST', '/api/operator/roles', { email: people.user.email, role: 'admin' }], ['POST', '/api/operator/roles/revoke', { email: people.admin.email }],
    ];
    for (const [method, path, body] of routes) {
      const asUser = await call(people.user, method, path, body);
      expect([path, asUser.status, asUser.body.exceptionCode]).toEqual([path, 403, 'FORBIDDEN']);
      expect([path, (await call(undefined, method, path, body)).status]).toEqual([path, 401]);
    }
    for (const [method, path, body] of routes.filter(([, path]) => /adjustments($|\/)|roles/.test(path) && !path.endsWith('/adjustments'))) {
      const asSupport = await call(people.support, method, path, body);
      expect([path, asSupport.status, asSupport.body.exceptionCode]).toEqual([path, 403, 'FORBIDDEN']);
    }
    expect((await call(people.support, 'GET', '/api/operator/adjustments')).status).toBe(200);
    // A role revoked stops working at the next request.
    await grantRole(pool, COMMAND_LINE, { email: people.user.email, role: 'support' });
    expect((await call(people.user, 'GET', '/api/operator/me')).status).toBe(200);
    await revokeRole(pool, COMMAND_LINE, { email: people.user.email });
    expect((await call(people.user, 'GET', '/api/operator/me')).status).toBe(403);
  });

  it('finds a user by e-mail, user id, account id, Telegram id, deposit address and transaction hash', async () => {
    const { userId, accountId, email } = people.user;
    await pool.query(`INSERT INTO telegram_accounts (telegram_id, user_id, username) VALUES (7700${stamp % 100000}, $1, 'someone')`, [userId]);
    const address = `0xAbCdEf${String(stamp).padStart(34, '0')}`;
    await pool.query(`INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index) VALUES ('ETHEREUM', $2, $1, 999)`, [accountId, address]);
    await pool.query(
      `INSERT INTO chain_deposits (network, tx_hash, output_index, currency, to_address, amount, wallet_account_id, confirmations_required) VALUES ('LITECOIN', 'dep${stamp}', 0, 'LTC', 'ltc1q', 100, $1, 6)`,
      [accountId],
    );
    await pool.query(
      `INSERT INTO withdrawals (wallet_account_id, idempotency_key, kind, state, currency, network, amount, fee, to_address, tx_hash, replaced_tx_hashes, created_at)
       VALUES ($1, 'stuck-${stamp}', 'EXTERNAL', 'BROADCAST', 'LTC', 'LITECOIN', 1000, 10, 'ltc1qdest', 'wd${stamp}', ARRAY['old${stamp}'], now() - interval '2 hours')`,
      [accountId],
    );
    const search = async (q: string) => (await call<{ hits: { accountId: string; matchedBy: string }[] }>(people.support, 'GET', `/api/operator/search?q=${encodeURIComponent(q)}`)).body.hits;
    const keys: [string, string][] = [
      [email.toUpperCase(), 'email'], [userId, 'user'], [accountId, 'account'], [`7700${stamp % 100000}`, 'telegram'], [address.toLowerCase(), 'address'],
      [`dep${stamp}`, 'deposit'], [`wd${stamp}`, 'withdrawal'], [`old${stamp}`, 'withdrawal'],
    ];
    for (const [q, matchedBy] of keys) expect([q, await search(q)]).toEqual([q, [expect.objectContaining({ accountId, matchedBy })]]);
    expect(await search('nobody@example.org')).toEqual([]);

    const view = await call<{ user: { email: string }; telegram: { username: string }; deposits: unknown[]; orders: { flow: string; state: string }[]; signIn: { failures: number } }>(people.support, 'GET', `/api/operator/users/${userId}`);
    expect(view.status).toBe(200);
    expect(view.body.user.email).toBe(email);
    expect(view.body.telegram.username).toBe('someone');
    expect(view.body.deposits).toHaveLength(1);
    expect(view.body.orders).toEqual([expect.objectContaining({ flow: 'withdrawal', state: 'BROADCAST' })]);
    expect((await call(people.support, 'GET', '/api/operator/users/not-a-uuid')).status).toBe(400);
    expect((await call(people.support, 'GET', `/api/operator/users/00000000-0000-4000-8000-000000000000`)).body.exceptionCode).toBe('OPERATOR_USER_NOT_FOUND');

    const stuck = await call<{ items: { kind: string; id: string; ageSeconds: number }[] }>(people.support, 'GET', '/api/operator/stuck?minutes=60');
    expect(stuck.body.items).toEqual([expect.objectContaining({ kind: 'withdrawal', state: 'BROADCAST', network: 'LITECOIN' })]);
    expect(stuck.body.items[0]?.ageSeconds).toBeGreaterThan(7000);
    expect((await call(people.support, 'GET', '/api/operator/stuck?minutes=abc')).status).toBe(400);
    // Rows made up for the search, not money the ledger moved: gone before the audit.
    await pool.query(`DELETE FROM chain_deposits WHERE tx_hash = $1`, [`dep${stamp}`]);
    await pool.query(`DELETE FROM withdrawals WHERE tx_hash = $1`, [`wd${stamp}`]);
  });

  it('freezes and unfreezes withdrawals with a reason, each written to the audit log', async () => {
    const { accountId } = people.finance2;
    const path = `/api/operator/accounts/${accountId}`;
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: '' })).status).toBe(400);
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: 'card fraud report' })).body.result).toBe('frozen');
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: 'again' })).body.result).toBe('already');
    await expect(refuseFrozenWithdrawals(pool, accountId)).rejects.toMatchObject({ code: 'WITHDRAWALS_FROZEN' });
    expect((await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'cleared by the bank' })).body.result).toBe('unfrozen');
    await expect(refuseFrozenWithdrawals(pool, accountId)).resolves.toBeUndefined();
    const audit = await call<{ audit: { action: string; actor: string; reason: string }[] }>(people.support, 'GET', `/api/operator/audit?subject=account:${accountId}`);
    expect(audit.body.audit.map((a) => [a.action, a.actor, a.reason])).toEqual([
      ['withdrawals.unfreeze', people.support.email, 'cleared by the bank'],
      ['withdrawals.freeze', people.support.email, 'card fraud report'],
    ]);
    // A deposit still owed back keeps the freeze.
    await pool.query(`UPDATE wallet_accounts SET withdrawals_frozen_at = now(), withdrawals_frozen_reason = 'reorg' WHERE id = $1`, [accountId]);
    await pool.query(
      `INSERT INTO chain_deposits (network, tx_hash, output_index, currency, to_address, amount, wallet_account_id, confirmations_required, state) VALUES ('LITECOIN', 'due${stamp}', 0, 'LTC', 'ltc1q', 100, $1, 6, 'REVERSAL_DUE')`,
      [accountId],
    );
    const kept = await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'try' });
    expect([kept.status, kept.body.exceptionCode]).toEqual([409, 'FREEZE_REVERSAL_DUE']);
    await pool.query(`UPDATE chain_deposits SET state = 'FAILED' WHERE tx_hash = $1`, [`due${stamp}`]);
    expect((await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'settled' })).body.result).toBe('unfrozen');
    await pool.query(`DELETE FROM chain_deposits WHERE tx_hash = $1`, [`due${stamp}`]);
  });

  it('applies a credit only when a second finance operator approves, once under concurrent approvals; a debit never below zero', async () => {
    const { accountId } = people.user;
    const balance = async () => (await balancesOf(pool, accountId)).find((b) => b.currency === 'BTC') ?? { available: 0n };
    const proposed = await call<{ id: string; state: string; amount: string }>(people.finance1, 'POST', '/api/operator/adjustments', { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '0.015', reason: 'lost deposit tx abc' });
    expect([proposed.status, proposed.body.state, proposed.body.amount]).toEqual([201, 'PROPOSED', '0.015']);
    const id = proposed.body.id;
    expect((await balance()).available).toBe(0n);

    const own = await call(people.finance1, 'POST', `/api/operator/adjustments/${id}/approve`, {});
    expect([own.status, own.body.exceptionCode]).toEqual([403, 'ADJUSTMENT_OWN_PROPOSAL']);
    const bySupport = await call(people.support, 'POST', `/api/operator/adjustments/${id}/approve`, {});
    expect([bySupport.status, bySupport.body.exceptionCode]).toEqual([403, 'FORBIDDEN']);

    const approvals = await Promise.all(Array.from({ length: 8 }, (_, i) => call(i % 2 ? people.finance2 : people.admin, 'POST', `/api/operator/adjustments/${id}/approve`, { reason: 'checked on chain' })));
    expect(approvals.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(approvals.filter((a) => a.body.result === 'approved')).toHaveLength(1);
    expect((await balance()).available).toBe(1_500_000n);
    const entries = await pool.query(`SELECT kind FROM ledger_entries WHERE idempotency_key = $1`, [`adjustment:credit:${id}`]);
    expect(entries.rows).toEqual([{ kind: 'OPERATOR_CREDIT' }]);
    // The user sees the money at once (the cached balances were dropped) and one completed deposit in the history.
    const assets = await call<{ currency: string; totalAvailable: string }[]>(people.user, 'GET', `/api/${accountId}/asset`);
    expect(assets.body.find((a) => a.currency === 'BTC')?.totalAvailable).toBe('0.015');
    const history = await call<{ result: { transactionType: string; state: string; amount: string; currency: string }[] }>(people.user, 'POST', `/api/${accountId}/asset/transactions`, {});
    expect(history.body.result.filter((item) => item.currency === 'BTC')).toEqual([expect.objectContaining({ transactionType: 'DEPOSIT', state: 'COMPLETED', amount: '0.015' })]);
    expect((await call(people.finance2, 'POST', `/api/operator/adjustments/${id}/reject`, { reason: 'too late' })).body.result).toBe('already');

    const debit = await call<{ id: string }>(people.finance2, 'POST', '/api/operator/adjustments', { account: accountId, kind: 'DEBIT', currency: 'BTC', amount: '0.02', reason: 'double credit' });
    const short = await call(people.finance1, 'POST', `/api/operator/adjustments/${debit.body.id}/approve`, {});
    expect([short.status, short.body.exceptionCode]).toEqual([409, 'ADJUSTMENT_INSUFFICIENT_FUNDS']);
    expect((await balance()).available).toBe(1_500_000n);
    expect((await call(people.finance1, 'POST', `/api/operator/adjustments/${debit.body.id}/reject`, { reason: 'more than the balance' })).body.result).toBe('rejected');
    const rejected = await call(people.admin, 'POST', `/api/operator/adjustments/${debit.body.id}/approve`, {});
    expect([rejected.status, rejected.body.exceptionCode]).toEqual([409, 'ADJUSTMENT_DECIDED']);

    for (const bad of [{ account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '-1', reason: 'x y z' }, { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '0.000000001', reason: 'too precise' }, { account: accountId, kind: 'GIFT', currency: 'BTC', amount: '1', reason: 'x y z' }, { account: accountId, kind: 'CREDIT', currency: 'NOPE', amount: '1', reason: 'x y z' }, { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '1' }]) {
      const refused = await call(people.finance1, 'POST', '/api/operator/adjustments', bad);
      expect([JSON.stringify(bad), refused.status, refused.body.exceptionCode]).toEqual([JSON.stringify(bad), 400, 'VALIDATION']);
    }
    const actions = (await pool.query<{ action: string; actor: string }>(`SELECT action, actor FROM operator_audit WHERE subject = $1 ORDER BY id`, [`adjustment:${id}`])).rows;
    expect(actions).toEqual([{ action: 'adjustment.propose', actor: people.finance1.email }, expect.objectContaining({ action: 'adjustment.approve' })]);
  });

  it('resends a mail from the outbox and lists it', async () => {
    const mails = await call<{ mails: { id: string; recipient: string; kind: string; resendable: boolean }[] }>(people.support, 'GET', `/api/operator/mail?recipient=${encodeURIComponent(people.user.email)}`);
    const confirm = mails.body.mails.find((m) => m.kind === 'confirm_email');
    expect(confirm?.resendable).toBe(true);
    const resent = await call<{ id: string; status: string }>(people.support, 'POST', `/api/operator/mail/${confirm?.id}/resend`, { reason: 'user did not get it' });
    expect([resent.status, resent.body.status]).toEqual([200, 'outbox']);
    const copy = await pool.query<{ recipient: string; kind: string }>('SELECT recipient, kind FROM mail_outbox WHERE id = $1', [resent.body.id]);
    expect(copy.rows).toEqual([{ recipient: people.user.email, kind: 'confirm_email' }]);
    expect((await call(people.support, 'POST', '/api/operator/mail/999999999/resend', {})).body.exceptionCode).toBe('MAIL_NOT_FOUND');
    expect((await call(people.support, 'POST', '/api/operator/mail/abc/resend', {})).body.exceptionCode).toBe('MAIL_NOT_FOUND');
    await pool.query(`INSERT INTO mail_outbox (recipient, subject, text, html, kind, status) VALUES ('x@example.com', 's', 'open [link removed]', 'h', 'reset_password', 'sent')`);
    const removed = (await pool.query<{ id: string }>(`SELECT id::text FROM mail_outbox WHERE recipient = 'x@example.com'`)).rows[0]?.id;
    expect((await call(people.support, 'POST', `/api/operator/mail/${removed}/resend`, {})).body.exceptionCode).toBe('MAIL_NOT_RESENDABLE');
  });

  it('keeps the audit log append-only', async () => {
    expect(Number((await pool.query('SELECT count(*) FROM operator_audit')).rows[0].count)).toBeGreaterThan(5);
    for (const statement of ['UPDATE operator_audit SET reason = NULL', 'DELETE FROM operator_audit', 'TRUNCATE operator_audit']) {
      await expect(pool.query(statement), statement).rejects.toThrow(/append-only/);
    }
  });
});
