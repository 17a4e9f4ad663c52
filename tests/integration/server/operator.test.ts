import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { finishAuthorization, signUpAndSignIn, startAuthorization, submitLogin, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { auditFailures } from '../../support/custody.ts';
import { COMMAND_LINE } from '../../../src/server/domain/operator/actor.ts';
import { grantRole, revokeRole } from '../../../src/server/domain/operator/roles.ts';

type Body = Record<string, unknown> & { exceptionCode?: string; result?: string };

/**
 * The operator console on the real server (issue 30 item 1): its own OpenID client, roles read from the database on
 * every request, and a credit the user sees at once; the rest of its rules are operator-console.test.ts's, in process.
 */
describe('the operator console', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let pool: pg.Pool;
  const call = gatewayClient<Body>(() => server.url);
  const password = 'a quite long secret';
  const stamp = Date.now();
  const people = {} as Record<'admin' | 'finance1' | 'finance2' | 'support' | 'user', SignedInUser & { email: string }>;

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    server = await startInProcess({ ...testServerEnv(database.url), PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(port), AUTH_RATE_LIMIT: '0', MAIL_RATE_LIMIT: '0' });
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
    await server?.close();
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
      ['GET', '/api/operator/reviews'], ['POST', `/api/operator/reviews/${id}/approve`, {}], ['POST', `/api/operator/reviews/${id}/reject`, { reason: 'because' }],
      ['GET', '/api/operator/unsealed'], ['POST', `/api/operator/unsealed/${id}/reseal`, {}],
    ];
    for (const [method, path, body] of routes) {
      const asUser = await call(people.user, method, path, body);
      expect([path, asUser.status, asUser.body.exceptionCode]).toEqual([path, 403, 'FORBIDDEN']);
      expect([path, (await call(undefined, method, path, body)).status]).toEqual([path, 401]);
    }
    for (const [method, path, body] of routes.filter(([, path]) => /adjustments($|\/)|roles|reviews|unsealed/.test(path) && !path.endsWith('/adjustments'))) {
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

  it("lists finance's unsealed withdrawals and refuses to re-approve what is not one: 400 for a bad id, 404 for none", async () => {
    const listed = await call<{ withdrawals: unknown[] }>(people.finance1, 'GET', '/api/operator/unsealed');
    expect([listed.status, listed.body.withdrawals]).toEqual([200, []]);
    const bad = await call(people.finance1, 'POST', '/api/operator/unsealed/not-an-id/reseal', {});
    expect([bad.status, bad.body.exceptionCode]).toEqual([400, 'VALIDATION']);
    const none = await call(people.finance1, 'POST', '/api/operator/unsealed/00000000-0000-4000-8000-000000000000/reseal', {});
    expect([none.status, none.body.exceptionCode]).toEqual([404, 'WITHDRAWAL_NOT_FOUND']);
    const long = await call(people.finance1, 'POST', '/api/operator/unsealed/00000000-0000-4000-8000-000000000000/reseal', { reason: 'x'.repeat(501) });
    expect([long.status, long.body.exceptionCode]).toEqual([400, 'VALIDATION']);
  });

  it('applies a credit approved by a second operator, which the user sees at once in balances and history', async () => {
    const { accountId } = people.user;
    const proposed = await call<{ id: string; state: string }>(people.finance1, 'POST', '/api/operator/adjustments', { account: accountId, kind: 'CREDIT', currency: 'BTC', amount: '0.015', reason: 'lost deposit tx abc' });
    expect([proposed.status, proposed.body.state]).toEqual([201, 'PROPOSED']);
    const own = await call(people.finance1, 'POST', `/api/operator/adjustments/${proposed.body.id}/approve`, {});
    expect([own.status, own.body.exceptionCode]).toEqual([403, 'ADJUSTMENT_OWN_PROPOSAL']);
    // The user's balance is read (and cached) before the approval: the approval drops the cached copy.
    expect((await call<{ currency: string }[]>(people.user, 'GET', `/api/${accountId}/asset`)).status).toBe(200);
    expect((await call(people.finance2, 'POST', `/api/operator/adjustments/${proposed.body.id}/approve`, {})).body.result).toBe('approved');
    const assets = await call<{ currency: string; totalAvailable: string }[]>(people.user, 'GET', `/api/${accountId}/asset`);
    expect(assets.body.find((a) => a.currency === 'BTC')?.totalAvailable).toBe('0.015');
    const history = await call<{ result: { transactionType: string; state: string; amount: string; currency: string }[] }>(people.user, 'POST', `/api/${accountId}/asset/transactions`, {});
    expect(history.body.result.filter((item) => item.currency === 'BTC')).toEqual([expect.objectContaining({ transactionType: 'DEPOSIT', state: 'COMPLETED', amount: '0.015' })]);
  });
});
