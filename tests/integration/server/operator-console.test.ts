import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { Hono } from 'hono';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, quietLog } from '../../support/custody.ts';
import { openDatabase, type Database } from '../../../src/server/db/database.ts';
import type { Config } from '../../../src/server/config.ts';
import { errorResponse } from '../../../src/server/http/errors.ts';
import { createOperatorApi } from '../../../src/server/http/operator.ts';
import type { AccessTokenVerifier } from '../../../src/server/http/auth-middleware.ts';
import type { StoredMail } from '../../../src/server/adapters/mail/port.ts';
import { COMMAND_LINE } from '../../../src/server/domain/operator/actor.ts';
import { decidedBy, grantRole, operatorByEmail, revokeRole, listOperators } from '../../../src/server/domain/operator/roles.ts';
import { inTransaction } from '../../../src/server/db/transaction.ts';
import { resolveAccount } from '../../../src/server/domain/operator/search.ts';
import { freezeAccount } from '../../../src/server/domain/operator/freeze.ts';
import { balancesOf } from '../../../src/server/domain/ledger.ts';
import { refuseFrozenWithdrawals, unfreezeWhenSettled } from '../../../src/server/domain/withdrawal-freeze.ts';
import { approveAdjustment, proposeAdjustment } from '../../../src/server/domain/operator/adjustments.ts';
import { openWithdrawal } from '../../../src/server/domain/withdrawals/open.ts';
import type { CheckedAddress } from '../../../src/server/domain/withdrawals/rules.ts';
import { findCoin } from '../../../src/lib/currencies.ts';
import { unitsOf } from '../../../src/lib/money.ts';

type Body = Record<string, unknown> & { exceptionCode?: string; result?: string };

/**
 * The operator console's routes and domain in this process (issue 30 item 1): a bearer token here is the user's id
 * (the sign-in itself is operator.test.ts's, against the real server). Search by each key, freeze, four eyes under
 * concurrent approvals, resend, stuck work, the append-only audit log.
 */
describe('the operator console, in process', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  const sent: StoredMail[] = [];
  let app: Hono;
  const stamp = Date.now();
  const people = {} as Record<'admin' | 'finance1' | 'finance2' | 'support' | 'user', { userId: string; accountId: string; email: string }>;

  const call = async <T = Body>(who: { userId: string } | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const response = await app.request(`/api/operator${path}`, {
      method,
      headers: { ...(who ? { authorization: `Bearer ${who.userId}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as T };
  };

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: await mkdtemp(join(tmpdir(), 'wallet-test-data-')) }, quietLog);
    const { pool } = database;
    for (const name of ['admin', 'finance1', 'finance2', 'support', 'user'] as const) {
      const made = await createWalletAccount(pool);
      const email = `${name}-${stamp}@example.com`;
      await pool.query('UPDATE users SET email = $2, email_confirmed_at = now() WHERE id = $1', [made.userId, email]);
      people[name] = { ...made, email };
    }
    const auth: AccessTokenVerifier = { verify: async (token) => ({ userId: token, sub: token }), cached: () => undefined, forgetUser: () => {}, revokeGrant: () => {} };
    const config = { publicUrl: 'http://wallet.test', oidc: { issuer: 'http://wallet.test/oidc', audience: 'http://wallet.test/api' } } as unknown as Config;
    const root = new Hono().basePath('/api');
    root.onError((error, c) => errorResponse(error, c, quietLog));
    root.route('/', createOperatorApi({ config, pool, auth, mail: { deliver: async (mail) => (sent.push(mail), { status: 'sent', error: null }), close: () => {} } }));
    app = root as unknown as Hono;
    await grantRole(pool, COMMAND_LINE, { email: people.admin.email, role: 'admin', reason: 'the first admin' });
    const admin = await operatorByEmail(pool, people.admin.email);
    await grantRole(pool, admin, { email: people.finance1.email, role: 'finance' });
    await grantRole(pool, admin, { email: people.finance2.email, role: 'finance' });
    await grantRole(pool, admin, { email: people.support.email, role: 'support' });
  });
  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await database?.close();
    await testDatabase?.drop();
  });

  it('keeps roles: granted by an admin or the command line, never revoked by oneself, refused to others', async () => {
    const { pool } = database;
    expect((await listOperators(pool)).map((o) => [o.email, o.role]).sort()).toEqual(
      [[people.admin.email, 'admin'], [people.finance1.email, 'finance'], [people.finance2.email, 'finance'], [people.support.email, 'support']].sort(),
    );
    const finance = await operatorByEmail(pool, people.finance1.email);
    await expect(grantRole(pool, finance, { email: people.user.email, role: 'support' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const admin = await operatorByEmail(pool, people.admin.email);
    await expect(revokeRole(pool, admin, { email: people.admin.email })).rejects.toMatchObject({ code: 'OPERATOR_OWN_ROLE' });
    await expect(operatorByEmail(pool, people.user.email)).rejects.toMatchObject({ code: 'OPERATOR_NOT_AN_OPERATOR' });
    await expect(operatorByEmail(pool, 'nobody@example.com')).rejects.toMatchObject({ code: 'OPERATOR_USER_NOT_FOUND' });
    expect((await call(people.user, 'GET', '/me')).status).toBe(403);
    expect((await call(people.support, 'GET', '/roles')).status).toBe(403);
    expect((await call(people.admin, 'POST', '/roles', { email: people.user.email, role: 'support' })).body.previous).toBe(null);
    expect((await call(people.user, 'GET', '/me')).body.role).toBe('support');
    expect((await call(people.admin, 'POST', '/roles/revoke', { email: people.user.email, reason: 'temporary' })).body.revoked).toBe('support');
    expect((await call(people.user, 'GET', '/me')).status).toBe(403);
    expect((await call(people.admin, 'POST', '/roles', { email: 'nobody@example.com', role: 'support' })).body.exceptionCode).toBe('OPERATOR_USER_NOT_FOUND');
    expect((await call(people.admin, 'POST', '/roles', { email: people.user.email, role: 'owner' })).status).toBe(400);
    expect(await resolveAccount(pool, people.user.email.toUpperCase())).toEqual({ accountId: people.user.accountId, userId: people.user.userId });
    expect(await resolveAccount(pool, people.user.userId)).toEqual({ accountId: people.user.accountId, userId: people.user.userId });
    await expect(resolveAccount(pool, 'nobody')).rejects.toMatchObject({ code: 'OPERATOR_ACCOUNT_NOT_FOUND' });
    const client = await call<{ oidc: { clientId: string; redirectUri: string } }>(undefined, 'GET', '/client-config');
    expect(client.body.oidc).toMatchObject({ clientId: 'operator-console', redirectUri: 'http://wallet.test/operator/callback' });
  });

  it('finds a user by e-mail, user id, account id, Telegram id, deposit address and transaction hash', async () => {
    const { pool } = database;
    // Rows made up for the search, not money the ledger moved: gone before the audit, whatever the outcome.
    onTestFinished(async () => {
      await pool.query(`DELETE FROM chain_deposits WHERE tx_hash = $1`, [`dep${stamp}`]);
      await pool.query(`DELETE FROM withdrawals WHERE tx_hash = $1`, [`wd${stamp}`]);
    });
    const { userId, accountId, email } = people.user;
    const telegramId = String(7_700_000 + (stamp % 100_000));
    await pool.query(`INSERT INTO telegram_accounts (telegram_id, user_id, username) VALUES ($1, $2, 'someone')`, [telegramId, userId]);
    const address = `0xAbCdEf${String(stamp).padStart(34, '0')}`;
    await pool.query(`INSERT INTO deposit_addresses (network, address, wallet_account_id, derivation_index) VALUES ('ETHEREUM', $2, $1, 999)`, [accountId, address]);
    await pool.query(`INSERT INTO chain_deposits (network, tx_hash, output_index, currency, to_address, amount, wallet_account_id, confirmations_required) VALUES ('LITECOIN', $2, 0, 'LTC', 'ltc1q', 100, $1, 6)`, [accountId, `dep${stamp}`]);
    await pool.query(
      `INSERT INTO withdrawals (wallet_account_id, idempotency_key, kind, state, currency, network, amount, fee, to_address, tx_hash, replaced_tx_hashes, created_at)
       VALUES ($1, $2, 'EXTERNAL', 'BROADCAST', 'LTC', 'LITECOIN', 1000, 10, 'ltc1qdest', $3, ARRAY[$4], now() - interval '2 hours')`,
      [accountId, `stuck-${stamp}`, `wd${stamp}`, `old${stamp}`],
    );
    const search = async (q: string) => (await call<{ hits: { accountId: string; matchedBy: string }[] }>(people.support, 'GET', `/search?q=${encodeURIComponent(q)}`)).body.hits;
    const keys: [string, string][] = [
      [email.toUpperCase(), 'email'], [email.slice(0, 8), 'email'], [userId, 'user'], [accountId, 'account'], [telegramId, 'telegram'], [address.toLowerCase(), 'address'],
      [`dep${stamp}`, 'deposit'], [`wd${stamp}`, 'withdrawal'], [`old${stamp}`, 'withdrawal'],
    ];
    for (const [q, matchedBy] of keys) expect([q, await search(q)]).toEqual([q, [expect.objectContaining({ accountId, matchedBy })]]);
    for (const nothing of ['nobody@example.org', '', 'two words', 'ab']) expect(await search(nothing)).toEqual([]);
    expect((await call(people.support, 'GET', `/search?q=${'x'.repeat(201)}`)).status).toBe(400);

    const view = await call<{ user: { email: string }; telegram: { username: string }; deposits: unknown[]; orders: { flow: string; state: string; amount: string }[]; signIn: { failures: number }; passcode: unknown }>(people.support, 'GET', `/users/${userId}`);
    expect(view.status).toBe(200);
    expect(view.body.user.email).toBe(email);
    expect(view.body.telegram.username).toBe('someone');
    expect(view.body.deposits).toEqual([expect.objectContaining({ amount: '0.000001', state: 'PENDING' })]);
    expect(view.body.orders).toEqual([expect.objectContaining({ flow: 'withdrawal', state: 'BROADCAST', amount: '0.00001' })]);
    expect(view.body.signIn.failures).toBe(0);
    expect(view.body.passcode).toBe(null);
    expect((await call(people.support, 'GET', `/users/${userId}/ledger?before=5`)).body).toEqual({ ledger: [] });
    expect((await call(people.support, 'GET', `/users/${userId}/ledger?before=x`)).status).toBe(400);
    expect((await call(people.support, 'GET', '/users/not-a-uuid')).status).toBe(400);
    expect((await call(people.support, 'GET', '/users/00000000-0000-4000-8000-000000000000')).body.exceptionCode).toBe('OPERATOR_USER_NOT_FOUND');

    const stuck = await call<{ items: { kind: string; state: string; network: string; ageSeconds: number }[]; olderThanMinutes: number }>(people.support, 'GET', '/stuck?minutes=60');
    expect(stuck.body.items).toEqual([expect.objectContaining({ kind: 'withdrawal', state: 'BROADCAST', network: 'LITECOIN' })]);
    expect(stuck.body.items[0]?.ageSeconds).toBeGreaterThan(7000);
    expect((await call<{ items: unknown[] }>(people.support, 'GET', '/stuck?minutes=180')).body.items).toEqual([]);
    expect((await call(people.support, 'GET', '/stuck?minutes=abc')).status).toBe(400);
    // Rows made up for the search, not money the ledger moved: gone before the audit.
  });

  it('freezes and unfreezes withdrawals with a reason, each written to the audit log', async () => {
    const { pool } = database;
    const { accountId } = people.finance2;
    const path = `/accounts/${accountId}`;
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: '' })).status).toBe(400);
    expect((await call(people.support, 'POST', '/accounts/00000000-0000-4000-8000-000000000000/freeze', { reason: 'no such one' })).body.exceptionCode).toBe('OPERATOR_ACCOUNT_NOT_FOUND');
    expect((await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'nothing frozen' })).body.result).toBe('already');
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: 'card fraud report' })).body.result).toBe('frozen');
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: 'again' })).body.result).toBe('already');
    await expect(refuseFrozenWithdrawals(pool, accountId)).rejects.toMatchObject({ code: 'WITHDRAWALS_FROZEN' });
    expect((await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'cleared by the bank' })).body.result).toBe('unfrozen');
    await expect(refuseFrozenWithdrawals(pool, accountId)).resolves.toBeUndefined();
    const audit = await call<{ audit: { action: string; actor: string; reason: string }[] }>(people.support, 'GET', `/audit?subject=account:${accountId}`);
    expect(audit.body.audit.map((a) => [a.action, a.actor, a.reason])).toEqual([
      ['withdrawals.unfreeze', people.support.email, 'cleared by the bank'],
      ['withdrawals.freeze', people.support.email, 'card fraud report'],
    ]);
    // A deposit still owed back keeps the freeze.
    await pool.query(`UPDATE wallet_accounts SET withdrawals_frozen_at = now(), withdrawals_frozen_reason = 'reorg' WHERE id = $1`, [accountId]);
    await pool.query(`INSERT INTO chain_deposits (network, tx_hash, output_index, currency, to_address, amount, wallet_account_id, confirmations_required, state) VALUES ('LITECOIN', $2, 0, 'LTC', 'ltc1q', 100, $1, 6, 'REVERSAL_DUE')`, [accountId, `due${stamp}`]);
    const kept = await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'try' });
    expect([kept.status, kept.body.exceptionCode]).toEqual([409, 'FREEZE_REVERSAL_DUE']);
    await pool.query(`DELETE FROM chain_deposits WHERE tx_hash = $1`, [`due${stamp}`]);
    expect((await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'settled' })).body.result).toBe('unfrozen');

    // An operator's freeze outlives a reorganisation settling (deposit-reversals.ts lifts only its own), and an
    // operator freezing an account a reorganisation froze makes the freeze theirs.
    const frozenReason = async () => (await pool.query<{ reason: string | null }>('SELECT withdrawals_frozen_reason AS reason FROM wallet_accounts WHERE id = $1', [accountId])).rows[0]?.reason;
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: 'fraud' })).body.result).toBe('frozen');
    expect(await unfreezeWhenSettled(pool, accountId)).toBe(false);
    expect(await frozenReason()).toBe('operator: fraud');
    expect((await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'cleared' })).body.result).toBe('unfrozen');
    await pool.query(`UPDATE wallet_accounts SET withdrawals_frozen_at = now(), withdrawals_frozen_reason = 'reorg' WHERE id = $1`, [accountId]);
    expect((await call(people.support, 'POST', `${path}/freeze`, { reason: 'fraud again' })).body.result).toBe('frozen');
    expect(await unfreezeWhenSettled(pool, accountId)).toBe(false);
    expect(await frozenReason()).toBe('operator: fraud again');
    expect((await call(people.support, 'POST', `${path}/unfreeze`, { reason: 'cleared' })).body.result).toBe('unfrozen');
  });

  it('applies a credit only when a second finance operator approves, once under concurrent approvals; a debit never below zero', async () => {
    const { pool } = database;
    const { accountId, userId } = people.user;
    const balance = async () => (await balancesOf(pool, accountId)).find((b) => b.currency === 'BTC')?.available ?? 0n;
    const proposed = await call<{ id: string; state: string; amount: string }>(people.finance1, 'POST', '/adjustments', { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '0,015', reason: 'lost deposit tx abc' });
    expect([proposed.status, proposed.body.state, proposed.body.amount]).toEqual([201, 'PROPOSED', '0.015']);
    const id = proposed.body.id;
    expect(await balance()).toBe(0n);
    expect((await call<{ adjustments: { id: string }[] }>(people.support, 'GET', '/adjustments')).body.adjustments.map((a) => a.id)).toEqual([id]);

    const own = await call(people.finance1, 'POST', `/adjustments/${id}/approve`, {});
    expect([own.status, own.body.exceptionCode]).toEqual([403, 'ADJUSTMENT_OWN_PROPOSAL']);
    const bySupport = await call(people.support, 'POST', `/adjustments/${id}/approve`, {});
    expect([bySupport.status, bySupport.body.exceptionCode]).toEqual([403, 'FORBIDDEN']);
    expect((await call(people.finance2, 'POST', '/adjustments/00000000-0000-4000-8000-000000000000/approve', {})).body.exceptionCode).toBe('ADJUSTMENT_NOT_FOUND');

    const approvals = await Promise.all(Array.from({ length: 8 }, (_, i) => call(i % 2 ? people.finance2 : people.admin, 'POST', `/adjustments/${id}/approve`, { reason: 'checked on chain' })));
    expect(approvals.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(approvals.filter((a) => a.body.result === 'approved')).toHaveLength(1);
    expect(await balance()).toBe(1_500_000n);
    expect((await pool.query(`SELECT kind FROM ledger_entries WHERE idempotency_key = $1`, [`adjustment:credit:${id}`])).rows).toEqual([{ kind: 'OPERATOR_CREDIT' }]);
    expect((await pool.query(`SELECT transaction_type, state, amount::text FROM wallet_transactions WHERE reference = $1`, [`adjustment:${id}`])).rows).toEqual([{ transaction_type: 'DEPOSIT', state: 'COMPLETED', amount: '1500000' }]);
    expect((await call(people.finance2, 'POST', `/adjustments/${id}/reject`, { reason: 'too late' })).body.result).toBe('already');
    expect((await call<{ adjustments: { id: string }[] }>(people.support, 'GET', '/adjustments?state=APPLIED')).body.adjustments.map((a) => a.id)).toEqual([id]);

    const debit = await call<{ id: string }>(people.finance2, 'POST', '/adjustments', { account: accountId, kind: 'DEBIT', currency: 'BTC', amount: '0.02', reason: 'double credit' });
    const short = await call(people.finance1, 'POST', `/adjustments/${debit.body.id}/approve`, {});
    expect([short.status, short.body.exceptionCode]).toEqual([409, 'ADJUSTMENT_INSUFFICIENT_FUNDS']);
    expect(await balance()).toBe(1_500_000n);
    expect((await call(people.finance1, 'POST', `/adjustments/${debit.body.id}/reject`, { reason: 'more than the balance' })).body.result).toBe('rejected');
    const rejected = await call(people.admin, 'POST', `/adjustments/${debit.body.id}/approve`, {});
    expect([rejected.status, rejected.body.exceptionCode]).toEqual([409, 'ADJUSTMENT_DECIDED']);

    const fix = await call<{ id: string }>(people.finance2, 'POST', '/adjustments', { account: accountId, kind: 'DEBIT', currency: 'BTC', amount: '0.005', reason: 'over-credited' });
    expect((await call(people.finance1, 'POST', `/adjustments/${fix.body.id}/approve`, {})).body.result).toBe('approved');
    expect(await balance()).toBe(1_000_000n);

    for (const bad of [
      { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '-1', reason: 'x y z' },
      { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '0.000000001', reason: 'too precise' },
      { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '0', reason: 'nothing' },
      { account: accountId, kind: 'GIFT', currency: 'BTC', amount: '1', reason: 'x y z' },
      { account: accountId, kind: 'CREDIT', currency: 'NOPE', amount: '1', reason: 'x y z' },
      { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '1' },
    ]) {
      const refused = await call(people.finance1, 'POST', '/adjustments', bad);
      expect([JSON.stringify(bad), refused.status, refused.body.exceptionCode]).toEqual([JSON.stringify(bad), 400, 'VALIDATION']);
    }
    const view = await call<{ adjustments: { state: string }[]; ledger: { kind: string }[]; balances: { currency: string; available: string }[]; audit: unknown[] }>(people.support, 'GET', `/users/${userId}`);
    expect(view.body.adjustments.map((a) => a.state).sort()).toEqual(['APPLIED', 'APPLIED', 'REJECTED']);
    expect(view.body.ledger.map((l) => l.kind)).toEqual(['OPERATOR_DEBIT', 'OPERATOR_CREDIT']);
    expect(view.body.balances).toEqual([expect.objectContaining({ currency: 'BTC', available: '0.01' })]);
    const actions = (await pool.query<{ action: string; actor: string }>(`SELECT action, actor FROM operator_audit WHERE subject = $1 ORDER BY id`, [`adjustment:${id}`])).rows;
    expect(actions).toEqual([{ action: 'adjustment.propose', actor: people.finance1.email }, expect.objectContaining({ action: 'adjustment.approve' })]);
  });

  it('resends a mail from the outbox as it was written, never one kept without its link', async () => {
    const { pool } = database;
    await pool.query(`INSERT INTO mail_outbox (recipient, subject, text, html, kind, status) VALUES ($1, 'Confirm', 'open http://wallet.test/c/1', '<a>open</a>', 'confirm_email', 'failed')`, [people.user.email]);
    const mails = await call<{ mails: { id: string; kind: string; resendable: boolean }[] }>(people.support, 'GET', `/mail?status=failed&recipient=${encodeURIComponent(people.user.email.toUpperCase())}`);
    const failed = mails.body.mails[0];
    expect(failed).toMatchObject({ kind: 'confirm_email', resendable: true });
    const resent = await call<{ id: string; status: string }>(people.support, 'POST', `/mail/${failed?.id}/resend`, { reason: 'user did not get it' });
    expect([resent.status, resent.body.status]).toEqual([200, 'sent']);
    expect(sent).toEqual([{ to: people.user.email, kind: 'confirm_email', subject: 'Confirm', text: 'open http://wallet.test/c/1', html: '<a>open</a>' }]);
    expect((await pool.query('SELECT recipient, status FROM mail_outbox WHERE id = $1', [resent.body.id])).rows).toEqual([{ recipient: people.user.email, status: 'sent' }]);
    expect((await call<{ mails: unknown[] }>(people.support, 'GET', `/mail?before=${resent.body.id}&recipient=${encodeURIComponent(people.user.email)}`)).body.mails).toHaveLength(1);
    expect((await call(people.support, 'POST', '/mail/999999999/resend', {})).body.exceptionCode).toBe('MAIL_NOT_FOUND');
    expect((await call(people.support, 'POST', '/mail/abc/resend', {})).body.exceptionCode).toBe('MAIL_NOT_FOUND');
    await pool.query(`INSERT INTO mail_outbox (recipient, subject, text, html, kind, status) VALUES ('x@example.com', 's', 'open [link removed]', 'h', 'reset_password', 'sent')`);
    const removed = (await pool.query<{ id: string }>(`SELECT id::text FROM mail_outbox WHERE recipient = 'x@example.com'`)).rows[0]?.id;
    expect((await call(people.support, 'POST', `/mail/${removed}/resend`, {})).body.exceptionCode).toBe('MAIL_NOT_RESENDABLE');
    expect(sent).toHaveLength(1);
  });

  it("joins another module's decision: the role checked and the audit line written in that decision's transaction", async () => {
    const { pool } = database;
    const decide = async (email: string, marker: string) =>
      inTransaction(pool, async (tx) => {
        await tx.query(`UPDATE wallet_accounts SET name = $2 WHERE id = $1`, [people.user.accountId, marker]);
        await decidedBy(await operatorByEmail(pool, email), 'finance', { action: 'withdrawal.approve', subject: `withdrawal:${marker}`, reason: 'looks fine' })(tx);
      });
    await expect(decide(people.support.email, 'by-support')).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await decide(people.finance2.email, 'by-finance');
    const name = (await pool.query<{ name: string }>('SELECT name FROM wallet_accounts WHERE id = $1', [people.user.accountId])).rows[0]?.name;
    expect(name).toBe('by-finance');
    const lines = (await pool.query<{ subject: string; actor: string }>(`SELECT subject, actor FROM operator_audit WHERE action = 'withdrawal.approve'`)).rows;
    expect(lines).toEqual([{ subject: 'withdrawal:by-finance', actor: people.finance2.email }]);
  });

  /** A BTC withdrawal of `units` held for review, as the gateway opens one the limits send there (limits.ts). */
  const underReview = async (accountId: string, units: bigint, to: string): Promise<string> => {
    const coin = findCoin('BTC');
    if (!coin) throw new Error('no BTC');
    const check = { checkResult: 'VALID', belongsToSameUser: false, accountType: 'B2C', internal: false, address: to, network: 'BITCOIN', recipientName: null, saved: false, recipientAccountId: null, senderType: 'B2C', senderName: null } satisfies CheckedAddress;
    return inTransaction(database.pool, (db) =>
      openWithdrawal(db, { account: accountId, coin, units: unitsOf(units), fee: unitsOf(1000n), check, idempotencyKey: `review-${to}`, requestHash: to, limits: { usd: 650n * 10n ** 8n, reasons: ['ABOVE_THRESHOLD', 'NEW_ADDRESS'] } }),
    );
  };

  it('reviews withdrawals: finance only, approved once under concurrent approvals, rejected with a reason and its hold released, each in the audit', async () => {
    const { pool } = database;
    const { accountId, userId, email } = people.support;
    const proposal = await proposeAdjustment(pool, await operatorByEmail(pool, people.finance1.email), { accountId, kind: 'CREDIT', currency: 'BTC', amount: '0.01', reason: 'funds to withdraw' });
    await approveAdjustment(pool, await operatorByEmail(pool, people.finance2.email), { id: proposal.id });
    const btc = async () => (await balancesOf(pool, accountId)).find((b) => b.currency === 'BTC');
    const first = await underReview(accountId, 300_000n, `bc1qfirst${stamp}`);
    const second = await underReview(accountId, 200_000n, `bc1qsecond${stamp}`);
    expect(await btc()).toMatchObject({ available: 500_000n, onHold: 500_000n });

    // Support sees no queue and decides nothing.
    expect((await call(people.support, 'GET', '/reviews')).status).toBe(403);
    const bySupport = await call(people.support, 'POST', `/reviews/${first}/approve`, {});
    expect([bySupport.status, bySupport.body.exceptionCode]).toEqual([403, 'FORBIDDEN']);

    type Review = { orderId: string; userId: string; email: string; amount: string; currency: string; network: string; usd: string | null; reasons: string[]; ageSeconds: number };
    const queue = async () => (await call<{ reviews: Review[] }>(people.finance1, 'GET', '/reviews')).body.reviews;
    expect(await queue()).toEqual([
      expect.objectContaining({ orderId: first, userId, email, amount: '0.003', currency: 'BTC', network: 'BITCOIN', usd: '650.00', reasons: ['ABOVE_THRESHOLD', 'NEW_ADDRESS'], ageSeconds: expect.any(Number) }),
      expect.objectContaining({ orderId: second, amount: '0.002' }),
    ]);

    // A frozen account's withdrawal is not approved (it stays in the queue) until the freeze is lifted.
    expect((await call(people.support, 'POST', `/accounts/${accountId}/freeze`, { reason: 'checking the sender' })).body.result).toBe('frozen');
    const whileFrozen = await call(people.finance1, 'POST', `/reviews/${first}/approve`, {});
    expect([whileFrozen.status, whileFrozen.body.exceptionCode]).toEqual([403, 'WITHDRAWALS_FROZEN']);
    expect((await pool.query('SELECT state, review_decision FROM withdrawals WHERE id = $1', [first])).rows).toEqual([{ state: 'UNDER_REVIEW', review_decision: null }]);
    expect((await call(people.support, 'POST', `/accounts/${accountId}/unfreeze`, { reason: 'sender checked' })).body.result).toBe('unfrozen');

    // Eight approvals at once: one decides, the others learn it is already done; the withdrawal goes on once.
    const approvals = await Promise.all(Array.from({ length: 8 }, (_, i) => call([people.finance1, people.finance2, people.admin][i % 3], 'POST', `/reviews/${first}/approve`, { reason: 'known customer' })));
    expect(approvals.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(approvals.filter((a) => a.body.result === 'approved')).toHaveLength(1);
    expect(approvals.filter((a) => a.body.result === 'already')).toHaveLength(7);
    expect((await pool.query('SELECT state, review_decision FROM withdrawals WHERE id = $1', [first])).rows).toEqual([{ state: 'PENDING', review_decision: 'APPROVED' }]);
    const late = await call(people.finance2, 'POST', `/reviews/${first}/reject`, { reason: 'changed my mind' });
    expect([late.status, late.body.exceptionCode]).toEqual([409, 'WITHDRAWAL_NOT_UNDER_REVIEW']);

    // A rejection needs a reason; given one, the hold goes back and the user sees it Failed.
    for (const body of [{}, { reason: ' ' }]) expect((await call(people.finance2, 'POST', `/reviews/${second}/reject`, body)).body.exceptionCode).toBe('VALIDATION');
    expect((await call(people.finance2, 'POST', `/reviews/${second}/reject`, { reason: 'address on a sanctions list' })).body.result).toBe('rejected');
    expect((await call(people.finance1, 'POST', `/reviews/${second}/reject`, { reason: 'again' })).body.result).toBe('already');
    expect((await pool.query('SELECT state, failure_reason FROM withdrawals WHERE id = $1', [second])).rows).toEqual([{ state: 'FAILED', failure_reason: 'REVIEW_REJECTED' }]);
    expect(await btc()).toMatchObject({ available: 700_000n, onHold: 300_000n });
    expect(await queue()).toEqual([]);

    expect((await call(people.finance1, 'POST', '/reviews/not-an-id/approve', {})).status).toBe(400);
    const missing = await call(people.finance1, 'POST', '/reviews/00000000-0000-4000-8000-000000000000/approve', {});
    expect([missing.status, missing.body.exceptionCode]).toEqual([404, 'WITHDRAWAL_NOT_FOUND']);

    const lines = (await pool.query<{ action: string; subject: string; actor: string; reason: string }>(`SELECT action, subject, actor, reason FROM operator_audit WHERE subject = ANY($1) ORDER BY id`, [[`withdrawal:${first}`, `withdrawal:${second}`]])).rows;
    expect(lines).toEqual([
      { action: 'withdrawal.approve', subject: `withdrawal:${first}`, actor: expect.any(String), reason: 'known customer' },
      { action: 'withdrawal.reject', subject: `withdrawal:${second}`, actor: people.finance2.email, reason: 'address on a sanctions list' },
    ]);
    // The user view shows the decisions among what operators did to this user.
    const view = await call<{ audit: { action: string }[] }>(people.finance1, 'GET', `/users/${userId}`);
    expect(view.body.audit.map((a) => a.action)).toEqual(expect.arrayContaining(['withdrawal.approve', 'withdrawal.reject']));
  });

  it('keeps the audit log append-only, and pages it', async () => {
    const { pool } = database;
    const all = await call<{ audit: { id: number }[] }>(people.support, 'GET', '/audit');
    expect(all.body.audit.length).toBeGreaterThan(10);
    const oldest = all.body.audit.at(-1)?.id ?? 0;
    expect((await call<{ audit: unknown[] }>(people.support, 'GET', `/audit?before=${oldest}`)).body.audit).toEqual([]);
    for (const statement of ['UPDATE operator_audit SET reason = NULL', 'DELETE FROM operator_audit', 'TRUNCATE operator_audit']) {
      await expect(pool.query(statement), statement).rejects.toThrow(/append-only/);
    }
  });

  it('offers the same actions on the command line, each checked against the operator it names', async () => {
    const run = (...args: string[]) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) =>
        execFile(process.execPath, ['src/server/cli/operator.ts', ...args], { env: { ...process.env, DATABASE_URL: testDatabase.url, LOG_LEVEL: 'warn' } }, (error, out, err) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out, err }),
        ),
      );
    const { email } = people.user;
    // Only grant and revoke may run without --as; everything else names its operator (checked in the domain).
    await expect(freezeAccount(database.pool, COMMAND_LINE, { accountId: people.user.accountId, reason: 'nobody named' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await run('freeze', email, 'suspicious', 'logins', '--as', people.support.email)).toMatchObject({ code: 0, out: `account ${people.user.accountId}: frozen\n` });
    const proposed = await run('credit', email, 'btc', '0.001', 'lost', 'deposit', '--as', people.finance1.email);
    const id = /proposed ([0-9a-f-]{36})/.exec(proposed.out)?.[1] ?? '';
    expect(id).not.toBe('');
    expect((await run('approve', id, 'checked', '--as', people.finance2.email)).out).toBe(`${id}: approved\n`);
    const audit = JSON.parse((await run('audit', '1')).out) as { action: string; reason: string; actor: string }[];
    expect(audit).toEqual([expect.objectContaining({ action: 'adjustment.approve', reason: 'checked', actor: people.finance2.email })]);
    // The review queue: listed, and decided by a named finance operator only.
    const held = await underReview(people.support.accountId, 100_000n, `bc1qcli${stamp}`);
    expect((JSON.parse((await run('reviews')).out) as { orderId: string }[]).map((r) => r.orderId)).toEqual([held]);
    expect(await run('reject-withdrawal', held, 'no', 'reason', 'given')).toMatchObject({ code: 1, err: expect.stringContaining('FORBIDDEN') });
    expect((await run('reject-withdrawal', held, 'suspicious', 'address', '--as', people.finance1.email)).out).toBe(`withdrawal ${held}: rejected\n`);
    expect((await run('approve-withdrawal', held, '--as', people.finance2.email)).err).toContain('WITHDRAWAL_NOT_UNDER_REVIEW');
    expect((JSON.parse((await run('audit', '1')).out) as { action: string; reason: string }[])[0]).toMatchObject({ action: 'withdrawal.reject', reason: 'suspicious address' });
    expect((await run('nonsense')).err).toContain('usage: npm run operator');
  }, 120_000);
});
