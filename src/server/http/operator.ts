/**
 * The operator console's gateway, /api/operator/* (README, "Operator console"). Every route but the sign-in
 * configuration reads the caller's role from the database on each request (`guard`): a user without one gets 403
 * FORBIDDEN on every route, support gets 403 on finance's and admin's. The domain checks the role again inside each
 * action's transaction. The withdrawal review queue (domain/withdrawals/review.ts) is finance's: each decision passes
 * `decidedBy(operator, 'finance', line)` (domain/operator/roles.ts) as its hook, so the role is checked again and the
 * audit line written in the decision's own transaction.
 */
import type { ApprovalSeal } from '../domain/signing.ts';
import { Hono, type MiddlewareHandler } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { MailDelivery } from '../adapters/mail/port.ts';
import { DomainError } from '../domain/errors.ts';
import type { OperatorActor, Role } from '../domain/operator/actor.ts';
import { approveAdjustment, listAdjustments, proposeAdjustment, rejectAdjustment } from '../domain/operator/adjustments.ts';
import { listAudit } from '../domain/operator/audit.ts';
import { freezeAccount, unfreezeAccount } from '../domain/operator/freeze.ts';
import { listOutbox, resendMail } from '../domain/operator/mail.ts';
import { decidedBy, grantRole, listOperators, operatorById, revokeRole, roleIncludes, ROLES } from '../domain/operator/roles.ts';
import { searchUsers } from '../domain/operator/search.ts';
import { stuckWork } from '../domain/operator/stuck.ts';
import { accountsOf, ledgerLines, userView } from '../domain/operator/user-view.ts';
import { approveWithdrawal, listUnsealedWithdrawals, listWithdrawalsUnderReview, rejectWithdrawal, resealWithdrawal } from '../domain/withdrawals/review.ts';
import { OPERATOR_CLIENT_ID } from '../idp/clients.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { currency, uuid } from './fields.ts';
import { jsonInput } from './json-input.ts';

export type OperatorEnv = { Bindings: ApiEnv['Bindings']; Variables: ApiEnv['Variables'] & { operator: OperatorActor } };


const reason = z.string({ error: 'Give a reason' }).trim().min(3, 'Give a reason of at least 3 characters').max(500, 'A reason has at most 500 characters');
const optionalReason = z.string().trim().max(500, 'A reason has at most 500 characters').optional();
const accountParam = uuid('The account is an account id');
const pageBefore = z.coerce.number().int().positive().optional();

const adjustmentBody = z.object({
  account: accountParam,
  kind: z.enum(['CREDIT', 'DEBIT'], { error: 'The kind is CREDIT or DEBIT' }),
  currency,
  amount: z.string({ error: 'The amount is a decimal string' }).trim().regex(/^\d{1,12}(?:[.,]\d{1,18})?$/, 'The amount is a positive decimal number'),
  reason,
});

/** Each item with how long it has waited since `createdAt`, in whole seconds (the console shows it as an age). */
function withAge<T extends { createdAt: string }>(items: readonly T[]): (T & { ageSeconds: number })[] {
  const now = Date.now();
  return items.map((item) => ({ ...item, ageSeconds: Math.max(0, Math.floor((now - Date.parse(item.createdAt)) / 1000)) }));
}

function parseQuery<S extends z.ZodType>(schema: S, query: Record<string, string>): z.output<S> {
  return schema.parse(query);
}

export function createOperatorApi(deps: { config: Config; pool: pg.Pool; auth: AccessTokenVerifier; mail: MailDelivery; approvalSeal?: ApprovalSeal | undefined }): Hono<OperatorEnv> {
  const { pool, config } = deps;
  const app = new Hono<OperatorEnv>();
  const signedIn = requireAuth(deps.auth) as unknown as MiddlewareHandler<OperatorEnv>;
  /** Signed in, and holding `needed` (or a role above it) now, read from the database. */
  const guard = (needed: Role): MiddlewareHandler<OperatorEnv> => (c, next) =>
    signedIn(c, async () => {
      const operator = await operatorById(pool, c.get('principal').userId);
      if (!operator || !roleIncludes(operator.role, needed)) throw new DomainError('FORBIDDEN', operator ? `This needs the ${needed} role` : 'This is for operators');
      c.set('operator', operator);
      c.header('Cache-Control', 'no-store');
      await next();
    });
  const support = guard('support');
  const finance = guard('finance');
  const admin = guard('admin');

  // Public: how the console's page signs in (its own client of the same provider).
  app.get('/operator/client-config', (c) =>
    c.json({
      oidc: {
        authority: config.oidc.issuer,
        clientId: OPERATOR_CLIENT_ID,
        redirectUri: `${config.publicUrl}/operator/callback`,
        postLogoutRedirectUri: `${config.publicUrl}/operator`,
        scope: 'openid email profile wallet',
        resource: config.oidc.audience,
      },
    }),
  );

  app.get('/operator/me', support, (c) => c.json(c.get('operator')));

  app.get('/operator/search', support, async (c) => {
    const { q } = parseQuery(z.object({ q: z.string().max(200, 'A search has at most 200 characters').default('') }), c.req.query());
    return c.json({ hits: await searchUsers(pool, q) });
  });

  app.get('/operator/users/:user', support, async (c) => {
    const user = uuid('The user is a user id').parse(c.req.param('user'));
    const view = await userView(pool, user);
    const withdrawals = view.orders.filter((o) => o.flow === 'withdrawal').map((o) => `withdrawal:${o.id}`);
    const audit = await listAudit(pool, { limit: 50, subjects: [`user:${user}`, ...view.accounts.map((a) => `account:${a.id}`), ...withdrawals] });
    const adjustments = (await Promise.all(view.accounts.map((a) => Promise.all((['PROPOSED', 'APPLIED', 'REJECTED'] as const).map((state) => listAdjustments(pool, { state, accountId: a.id })))))).flat(2);
    return c.json({ ...view, audit, adjustments });
  });

  app.get('/operator/users/:user/ledger', support, async (c) => {
    const user = uuid('The user is a user id').parse(c.req.param('user'));
    const { before } = parseQuery(z.object({ before: pageBefore }), c.req.query());
    return c.json({ ledger: await ledgerLines(pool, await accountsOf(pool, user), { before }) });
  });

  app.post('/operator/accounts/:account/freeze', support, jsonInput(z.object({ reason })), async (c) => {
    const accountId = accountParam.parse(c.req.param('account'));
    return c.json({ result: await freezeAccount(pool, c.get('operator'), { accountId, reason: c.req.valid('json').reason }) });
  });

  app.post('/operator/accounts/:account/unfreeze', support, jsonInput(z.object({ reason })), async (c) => {
    const accountId = accountParam.parse(c.req.param('account'));
    return c.json({ result: await unfreezeAccount(pool, c.get('operator'), { accountId, reason: c.req.valid('json').reason }) });
  });

  app.get('/operator/adjustments', support, async (c) => {
    const { state } = parseQuery(z.object({ state: z.enum(['PROPOSED', 'APPLIED', 'REJECTED']).default('PROPOSED') }), c.req.query());
    return c.json({ adjustments: await listAdjustments(pool, { state }) });
  });

  app.post('/operator/adjustments', finance, jsonInput(adjustmentBody), async (c) => {
    const body = c.req.valid('json');
    return c.json(await proposeAdjustment(pool, c.get('operator'), { accountId: body.account, kind: body.kind, currency: body.currency, amount: body.amount, reason: body.reason }), 201);
  });

  app.post('/operator/adjustments/:id/approve', finance, jsonInput(z.object({ reason: optionalReason })), async (c) => {
    const id = uuid('The proposal is an id').parse(c.req.param('id'));
    return c.json({ result: await approveAdjustment(pool, c.get('operator'), { id, reason: c.req.valid('json').reason }) });
  });

  app.post('/operator/adjustments/:id/reject', finance, jsonInput(z.object({ reason })), async (c) => {
    const id = uuid('The proposal is an id').parse(c.req.param('id'));
    return c.json({ result: await rejectAdjustment(pool, c.get('operator'), { id, reason: c.req.valid('json').reason }) });
  });

  app.get('/operator/reviews', finance, async (c) => c.json({ reviews: withAge(await listWithdrawalsUnderReview(pool)) }));

  // 'approved' or 'rejected' once; 'already' when the same decision was taken before (a second click, a retry).
  app.post('/operator/reviews/:id/approve', finance, jsonInput(z.object({ reason: optionalReason })), async (c) => {
    const id = uuid('The withdrawal is a withdrawal id').parse(c.req.param('id'));
    const operator = c.get('operator');
    const { reason: why } = c.req.valid('json');
    const line = { action: 'withdrawal.approve', subject: `withdrawal:${id}`, reason: why };
    return c.json({ result: await approveWithdrawal(pool, { orderId: id, operatorId: operator.id, reason: why }, decidedBy(operator, 'finance', line), deps.approvalSeal) });
  });

  app.post('/operator/reviews/:id/reject', finance, jsonInput(z.object({ reason })), async (c) => {
    const id = uuid('The withdrawal is a withdrawal id').parse(c.req.param('id'));
    const operator = c.get('operator');
    const { reason: why } = c.req.valid('json');
    const line = { action: 'withdrawal.reject', subject: `withdrawal:${id}`, reason: why };
    return c.json({ result: await rejectWithdrawal(pool, { orderId: id, operatorId: operator.id, reason: why }, decidedBy(operator, 'finance', line)) });
  });

  // Outside withdrawals on their way from before the approval seal: the signer refuses them until finance re-approves.
  app.get('/operator/unsealed', finance, async (c) => c.json({ withdrawals: withAge(await listUnsealedWithdrawals(pool)) }));

  // Its figures as they stand sealed for the signer, once: 409 WITHDRAWAL_NOT_UNSEALED for one sealed (or done) since.
  app.post('/operator/unsealed/:id/reseal', finance, jsonInput(z.object({ reason: optionalReason })), async (c) => {
    const id = uuid('The withdrawal is a withdrawal id').parse(c.req.param('id'));
    // Without the signer's channel (a process signing with the seed itself) there is nothing to seal with.
    if (!deps.approvalSeal) throw new DomainError('SERVICE_UNAVAILABLE', 'This server has no signer channel to seal with: run npm run operator -- reseal-withdrawal');
    const operator = c.get('operator');
    const { reason: why } = c.req.valid('json');
    const line = { action: 'withdrawal.reseal', subject: `withdrawal:${id}`, reason: why };
    return c.json({ result: await resealWithdrawal(pool, { orderId: id, operatorId: operator.id, reason: why }, deps.approvalSeal, decidedBy(operator, 'finance', line)) });
  });

  app.get('/operator/mail', support, async (c) => {
    const query = parseQuery(z.object({ status: z.enum(['outbox', 'sent', 'failed']).optional(), recipient: z.string().max(320).optional(), before: z.string().regex(/^\d{1,18}$/).optional() }), c.req.query());
    return c.json({ mails: await listOutbox(pool, query) });
  });

  app.post('/operator/mail/:id/resend', support, jsonInput(z.object({ reason: optionalReason })), async (c) => {
    return c.json(await resendMail(pool, deps.mail, c.get('operator'), { id: c.req.param('id'), reason: c.req.valid('json').reason }));
  });

  app.get('/operator/stuck', support, async (c) => {
    const { minutes } = parseQuery(z.object({ minutes: z.coerce.number().int().min(1).max(525_600).default(30) }), c.req.query());
    return c.json(await stuckWork(pool, minutes));
  });

  app.get('/operator/audit', support, async (c) => {
    const { before, subject } = parseQuery(z.object({ before: pageBefore, subject: z.string().max(100).optional() }), c.req.query());
    return c.json({ audit: await listAudit(pool, { before, limit: 50, subjects: subject ? [subject] : undefined }) });
  });

  app.get('/operator/roles', admin, async (c) => c.json({ operators: await listOperators(pool), roles: ROLES }));

  app.post('/operator/roles', admin, jsonInput(z.object({ email: z.string().trim().min(3).max(320), role: z.enum(['support', 'finance', 'admin']), reason: optionalReason })), async (c) => {
    const body = c.req.valid('json');
    return c.json({ previous: (await grantRole(pool, c.get('operator'), body)) ?? null });
  });

  app.post('/operator/roles/revoke', admin, jsonInput(z.object({ email: z.string().trim().min(3).max(320), reason: optionalReason })), async (c) => {
    const body = c.req.valid('json');
    return c.json({ revoked: (await revokeRole(pool, c.get('operator'), body)) ?? null });
  });

  return app;
}
