import { Hono } from 'hono';
import type pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { databaseStatus } from '../db/database.ts';
import { errorResponse } from './errors.ts';
import { boundedRequest } from './body-limit.ts';
import type { Db } from '../db/database.ts';
import type { UserService } from '../domain/users.ts';
import type { AccessTokenVerifier } from './auth-middleware.ts';
import { createUserApi } from './user.ts';
import type { Custody } from '../custody.ts';
import { createCatalogueApi } from './catalogue.ts';
import { createWalletApi } from './wallet.ts';
import { createSwapApi } from './swap.ts';
import { createWithdrawalApi } from './withdrawal.ts';
import { createWithdrawalService } from '../domain/withdrawals/requests.ts';
import { createSwapService } from '../domain/swaps/requests.ts';
import { createDevnetSandbox } from './sandbox-devnet.ts';
import { loopbackOnly } from './loopback-only.ts';
import { createSellApi } from './sell.ts';
import { createBuyApi } from './buy.ts';
import type { MailDelivery, Mailer } from '../adapters/mail/port.ts';
import { createOperatorApi } from './operator.ts';
import { createProtectionService } from '../domain/protection.ts';
import { createFeedbackService } from '../domain/feedback.ts';
import { createProtectionApi } from './protection.ts';
import { createAccountOwners } from './account-owner.ts';
import { createTelegramArea } from './telegram.ts';
import type { Accounts } from '../accounts.ts';
import type { SecretsKey } from '../adapters/keys/port.ts';
import type { Limits } from '../domain/limits.ts';
import type { AnalyticsSource } from '../domain/analytics.ts';
import { createAnalyticsApi } from './analytics.ts';
import { createReservesApi } from './reserves.ts';
import type { Readiness } from '../domain/readiness.ts';
import { withinBudget } from '../net/call-budget.ts';
import { createBalancesHotPath, type HotPath } from './balances-hot-path.ts';

const ACCOUNT_URL = /^[a-z]+:\/\/[^/]+\/api\/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\//;

/** `auth` is the bearer-token verifier: guard a route with `requireAuth(deps.auth)` from ./auth-middleware.ts. */
export type ApiDeps = { config: Config; log: Logger; pool: pg.Pool; db: Db; users: UserService; auth: AccessTokenVerifier; custody: Custody; mailer: Mailer; mailDelivery: MailDelivery; secrets: SecretsKey; limits: Limits; messenger?: Accounts['messenger']; analytics?: AnalyticsSource | undefined; readiness: Readiness };

/** One endpoint of the gateway, as registered: `path` has Hono's parameters (`/api/:account/asset`). */
export type ApiRoute = { method: string; path: string };

/** What the node server calls: Hono's fetch signature; `routes` lists every endpoint (the attack suite walks it). */
export type ApiHandler = {
  fetch: (request: Request, env?: unknown) => Promise<Response>;
  routes: readonly ApiRoute[];
  /** Answers the balances poll from memory at the node server when it can (balances-hot-path.ts); false: call `fetch`. */
  hot: HotPath;
};

/** The endpoints of Hono apps: middleware (`use`, method ALL on a wildcard) left out, each method and path once. */
function endpoints(...apps: Hono[]): ApiRoute[] {
  const seen = new Map<string, ApiRoute>();
  for (const route of apps.flatMap((app) => app.routes)) {
    if (route.method === 'ALL' && route.path.endsWith('*')) continue;
    seen.set(`${route.method} ${route.path}`, { method: route.method, path: route.path });
  }
  return [...seen.values()];
}

/** The gateway under /api: one sub-app per area is mounted here as the areas are built. */
export function createApi(deps: ApiDeps): ApiHandler {
  // Refusals are answered in the signed-in account's language (http/messages.ts).
  const accountLanguage = (userId: string) => deps.users.languageOf(userId);
  const api = new Hono().basePath('/api');
  api.onError((error, c) => errorResponse(error, c, deps.log, accountLanguage));
  api.notFound((c) => c.json({ exceptionCode: 'NOT_FOUND', message: `No such endpoint: ${c.req.method} ${c.req.path}` }, 404));

  api.get('/health', async (c) => {
    const database = await databaseStatus(deps.pool);
    return c.json({ status: database === 'up' ? 'ok' : 'degraded', version: deps.config.version, database }, database === 'up' ? 200 : 503);
  });
  // Readiness for load balancers (domain/readiness.ts): /health says the process answers, /ready that it should get traffic.
  api.get('/ready', async (c) => {
    const reasons = await deps.readiness.check();
    return reasons.length === 0 ? c.json({ status: 'ready' }) : c.json({ status: 'not ready', reasons }, 503);
  });
  // The one guard of every /{account}/… route (and of the purchase family's account): signed in, and the owner.
  const owners = createAccountOwners({ pool: deps.pool, auth: deps.auth });
  const feedback = createFeedbackService({ pool: deps.pool, mailer: deps.mailer, log: deps.log, supportEmail: deps.config.supportEmail });
  api.route('/', createUserApi({ config: deps.config, users: deps.users, auth: deps.auth, limits: deps.limits, analytics: deps.analytics, feedback }));
  // The embedded analytics data plane, unless an operator sends the SDK to another collector (config-analytics.ts).
  if (deps.analytics && deps.config.analytics.embedded) {
    api.route('/', createAnalyticsApi({ pool: deps.pool, writeKey: deps.analytics.writeKey, limit: deps.limits.limit('analytics'), trustProxy: deps.config.trustProxy }));
  }
  api.route('/', createProtectionApi({ protection: createProtectionService({ pool: deps.pool, mailer: deps.mailer, log: deps.log, secrets: deps.secrets }), auth: deps.auth, limits: deps.limits, trustProxy: deps.config.trustProxy }));
  // Telegram: authTg/linkTg, /user/tg…, the bot's webhook (telegram.ts); its Bot API stand-in goes under /sandbox.
  const telegram = createTelegramArea({ config: deps.config, log: deps.log, auth: deps.auth, messenger: deps.messenger });
  api.route('/', telegram.api);
  api.route('/', createReservesApi({ pool: deps.pool, auth: deps.auth }));
  api.route('/', createCatalogueApi({ catalogue: deps.custody.catalogue, rates: deps.custody.rates, lastKnownMaxAgeMs: deps.config.market.lastKnownMaxAgeMs }));
  // The operator console's routes (/operator/…), each checking the caller's role in the database.
  api.route('/', createOperatorApi({ config: deps.config, pool: deps.pool, auth: deps.auth, mail: deps.mailDelivery, approvalSeal: deps.custody.approvalSeal }));
  // /c2f/{account}/… starts with a fixed segment, so it stays on `api`.
  api.route('/', createSellApi({ pool: deps.pool, desk: deps.custody.sell, provider: deps.custody.payouts.provider, auth: deps.auth, owners, log: deps.log }));
  // /b2c/…, /fiatDeposit/… and the card provider's webhook: fixed first segments, so on `api` too.
  api.route('/', createBuyApi({ desk: deps.custody.buy, owners, provider: deps.custody.cards.provider, onRamp: deps.custody.cards.onRamp, auth: deps.auth, log: deps.log, limit: { limit: deps.limits.limit('public'), trustProxy: deps.config.trustProxy } }));

  // Routes of SPEC §7 under /api/{account}/… go on `accounts`, not `api`: a parameter first, beside /api/user and
  // the like, makes Hono give up its RegExpRouter for a slower trie on every route. Requests whose first segment
  // is an account id (a UUID) try `accounts` first and fall through to the rest when no route there matches.
  const accounts = new Hono().basePath('/api');
  accounts.onError((error, c) => errorResponse(error, c, deps.log, accountLanguage));
  // Known by identity, not by a header: reading a response's headers builds a Headers object (~3 % of a request).
  const fallThrough = new WeakSet<Response>();
  accounts.notFound(() => {
    const response = new Response(null, { status: 404 });
    fallThrough.add(response);
    return response;
  });
  accounts.route('/', createWalletApi({ pool: deps.pool, custody: deps.custody, owners, secrets: deps.secrets }));
  const swaps = createSwapService({
    pool: deps.pool,
    catalogue: deps.custody.catalogue,
    rates: deps.custody.rates,
    settings: { ...deps.config.swap, inventoryLimits: deps.config.market.inventoryLimits },
    quoteLimit: (account) => deps.limits.enforce(['quotesPerUser', account]),
  });
  accounts.route('/', createSwapApi({ pool: deps.pool, swaps, owners }));
  const withdrawals = createWithdrawalService({
    pool: deps.pool,
    chain: deps.custody.chain,
    rates: deps.custody.rates,
    addresses: deps.custody.addresses,
    catalogue: deps.custody.catalogue,
    settings: deps.config.withdrawals,
    changed: (id) => deps.custody.assets.invalidate(id),
    quoteLimit: (account) => deps.limits.enforce(['quotesPerUser', account]),
    approvalSeal: deps.custody.approvalSeal,
  });
  accounts.route('/', createWithdrawalApi({ pool: deps.pool, withdrawals, addresses: deps.custody.addresses, owners }));

  // /sandbox/* sits beside /api: the stand-ins for third parties, each on only where it stands in for one. Never in
  // production (config refuses them there; this is the second lock), and elsewhere only for direct loopback requests.
  const root = new Hono();
  root.onError((error, c) => errorResponse(error, c, deps.log, accountLanguage));
  root.notFound((c) => c.json({ exceptionCode: 'NOT_FOUND', message: `No such endpoint: ${c.req.method} ${c.req.path}` }, 404));
  root.route('/', api);
  if (!deps.config.production) {
    root.use('/sandbox/*', loopbackOnly());
    if (deps.custody.devnet) root.route('/sandbox/devnet', createDevnetSandbox(deps.custody.devnet));
    if (telegram.sandbox) root.route('/sandbox/telegram', telegram.sandbox);
    if (deps.custody.payouts.sandbox) root.route('/sandbox/payout', deps.custody.payouts.sandbox);
    if (deps.custody.cards.sandbox) root.route('/sandbox/card', deps.custody.cards.sandbox);
  }
  return {
    routes: endpoints(root, accounts),
    hot: createBalancesHotPath({ auth: deps.auth, owners, assets: deps.custody.assets }),
    async fetch(incoming, env) {
      const bounding = boundedRequest(incoming);
      const request = bounding === undefined ? incoming : await bounding.catch((error: unknown) => {
        // Reading a chunked body fails only when the client went away mid-upload: its fault, and nobody is listening.
        deps.log.warn({ err: error, path: new URL(incoming.url).pathname }, 'request aborted by the client');
        return new Response(JSON.stringify({ exceptionCode: 'ABORTED', message: 'The request was aborted' }), { status: 400, headers: { 'content-type': 'application/json' } });
      });
      if (request instanceof Response) return request;
      // Every chain node or API call a request makes shares one budget (net/call-budget.ts): a node that does not
      // answer is a 503 NETWORK_UNAVAILABLE well before the browser gives up, never a 30 s wait.
      return withinBudget(deps.config.chainRequestBudgetMs, async () => {
        if (ACCOUNT_URL.test(request.url)) {
          const response = await accounts.fetch(request, env);
          if (!fallThrough.has(response)) return response;
        }
        return root.fetch(request, env);
      });
    },
  };
}
