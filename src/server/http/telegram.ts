import { timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { payloadTooLarge } from './body-limit.ts';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { MESSENGER_CODES, type MessengerService, type OwnerProof } from '../domain/messenger.ts';
import { DomainError, isErrorCode } from '../domain/errors.ts';
import { signInitData } from '../domain/telegram-init-data.ts';
import { MESSENGER_GRANT, type TokenEndpointAnswer } from '../idp/messenger-grant.ts';
import type { WalletBot } from '../adapters/telegram/port.ts';
import { TELEGRAM_SANDBOX_PATH } from '../config-telegram.ts';
import { createTelegramSandbox } from './sandbox-telegram.ts';
import { FIRST_PARTY_SCOPE, API_SCOPE } from '../idp/provider.ts';
import { loopbackOnly } from './loopback-only.ts';
import { readJsonBody } from './json-body.ts';
import { jsonInput } from './json-input.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';

const initData = z.string({ error: 'The init data is required' }).min(1, 'The init data is required').max(8192, 'The init data is too long');
const oneTimeCode = z.string({ error: 'The one-time code is required' }).trim().min(1, 'The one-time code is required').max(128, 'The one-time code is not valid');
const authBody = z.object({ initData });
const linkLoginBody = z.object({ oneTimeCode, tgCode: initData });
const linkBody = z.object({ tgCode: initData });
const notificationsBody = z.object({ enabled: z.boolean({ error: 'enabled must be true or false' }) });
const updateBody = z.looseObject({ update_id: z.number().int() });
const devQuery = z.object({
  id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).default(100_000_001),
  first_name: z.string().max(64).default('Test'),
  username: z.string().max(32).regex(/^\w*$/).default('test_user'),
  language_code: z.string().max(8).regex(/^[a-z-]*$/i).default('en'),
  age: z.coerce.number().int().min(0).max(365 * 86_400).default(0),
});

/** The token user of SPEC §7 authTg/linkTg, in oidc-client-ts' User fields so the browser can keep and renew it. */
export type TokenUser = {
  access_token: string;
  id_token: string;
  refresh_token: string;
  token_type: string;
  scope: string;
  expires_at: number;
  profile: Record<string, unknown> & { sub: string };
};


const jsonBody = (c: { req: { text: () => Promise<string> } }) => readJsonBody(c.req);

function claimsOf(jwt: string): Record<string, unknown> & { sub: string } {
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  if (typeof payload.sub !== 'string') throw new Error('the ID token has no subject');
  return payload as Record<string, unknown> & { sub: string };
}

/** The passcode header and the sign-in time: linking and unlinking need one of them (domain/messenger.ts). */
function proofOf(c: Context<ApiEnv>): OwnerProof {
  return { pincode: c.req.header('pincode') || undefined, authTime: c.get('principal').authTime };
}

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The messenger's side of the gateway: authTg and linkTg (public, SPEC §6), the link calls of SPEC §7 under
 * /user/tg, the bot's webhook and, in development mode only, init data for a test Telegram user.
 */
export function createTelegramApi(deps: {
  config: Config;
  log: Logger;
  auth: AccessTokenVerifier;
  messenger: MessengerService | undefined;
  token: ((form: URLSearchParams) => Promise<TokenEndpointAnswer>) | undefined;
  bot: WalletBot | undefined;
}): Hono<ApiEnv> {
  const { config, log } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);
  const limit = bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.json(payloadTooLarge(16 * 1024), 413) });

  const messenger = (): MessengerService => {
    if (!deps.messenger) throw new DomainError('TG_DISABLED', 'Telegram is not configured on this server');
    return deps.messenger;
  };

  /** Asks the identity provider for tokens by the messenger grant; its refusals carry SPEC §8's codes. */
  const signIn = async (fields: { initData: string; oneTimeCode?: string }): Promise<TokenUser> => {
    messenger();
    if (!deps.token) throw new DomainError(MESSENGER_CODES.support, 'Telegram sign-in needs the embedded identity provider (OIDC_ISSUER names another issuer)');
    const form = new URLSearchParams({ grant_type: MESSENGER_GRANT, client_id: config.oidc.clientId, init_data: fields.initData, scope: `${FIRST_PARTY_SCOPE} ${API_SCOPE}` });
    if (fields.oneTimeCode !== undefined) form.set('one_time_code', fields.oneTimeCode);
    const answer = await deps.token(form);
    const body = answer.body;
    if (answer.status !== 200) {
      const code = typeof body.error === 'string' ? body.error : '';
      const message = typeof body.error_description === 'string' ? body.error_description : 'The Telegram sign-in failed';
      // The provider relays the messenger's refusals by their code; any other B2C_USM code is the client's.
      // A code of ours is relayed as it is; one we do not know is the sign-in failing.
      if (/^B2C_USM\d{4}$/.test(code)) throw new DomainError(isErrorCode(code) ? code : MESSENGER_CODES.failed, message);
      log.warn({ status: answer.status, error: code, description: message }, 'telegram sign-in refused by the identity provider');
      throw new DomainError(answer.status >= 500 ? MESSENGER_CODES.support : MESSENGER_CODES.failed, message);
    }
    const idToken = String(body.id_token);
    return {
      access_token: String(body.access_token),
      id_token: idToken,
      refresh_token: String(body.refresh_token),
      token_type: String(body.token_type ?? 'Bearer'),
      scope: String(body.scope ?? ''),
      expires_at: Math.floor(Date.now() / 1000) + Number(body.expires_in ?? 0),
      profile: claimsOf(idToken),
    };
  };

  app.post('/auth/tg', limit, jsonInput(authBody, { empty: undefined }), async (c) => {
    const body = c.req.valid('json');
    return c.json(await signIn({ initData: body.initData }));
  });

  app.post('/auth/tg/link', limit, jsonInput(linkLoginBody, { empty: undefined }), async (c) => {
    const body = c.req.valid('json');
    return c.json(await signIn({ initData: body.tgCode, oneTimeCode: body.oneTimeCode }));
  });

  app.post('/user/tg', auth, async (c) => c.json(await messenger().state(c.get('principal').userId)));

  app.post('/user/tg/code', auth, async (c) => {
    const userId = c.get('principal').userId;
    const created = await messenger().createLinkCode(userId, proofOf(c));
    // Without a bot, the development stand-in plays the bot's part for the development Telegram user.
    const url = config.telegram.devMode ? `${config.publicUrl}/sandbox/telegram/start?code=${encodeURIComponent(created.code)}` : created.url;
    return c.json({ code: created.code, url, expiresAt: created.expiresAt.toISOString() });
  });

  app.post('/user/tg/link', auth, limit, jsonInput(linkBody, { empty: undefined }), async (c) => {
    const body = c.req.valid('json');
    const userId = c.get('principal').userId;
    await messenger().linkWithInitData(userId, body.tgCode, proofOf(c));
    return c.json(await messenger().state(userId));
  });

  // Settings' switch of the bot's messages about the user's money (deposits, withdrawals, purchases).
  app.post('/user/tg/notifications', auth, jsonInput(notificationsBody), async (c) => c.json(await messenger().setNotifications(c.get('principal').userId, c.req.valid('json').enabled)));

  app.post('/user/tg/unlink', auth, async (c) => {
    const userId = c.get('principal').userId;
    await messenger().unlink(userId, proofOf(c));
    return c.json(await messenger().state(userId));
  });

  // Its body limit (1 MB, what Telegram sends) is the gateway's own for webhooks: http/body-limit.ts.
  app.post('/tg/webhook', async (c) => {
    const bot = deps.bot;
    if (!bot) throw new DomainError('TG_DISABLED', 'Telegram is not configured on this server');
    if (!sameSecret(c.req.header('x-telegram-bot-api-secret-token'), bot.webhookSecret)) throw new DomainError('UNAUTHORIZED', 'The webhook secret token is wrong');
    const update = updateBody.parse(await jsonBody(c));
    await bot.handleUpdate(update as Parameters<WalletBot['handleUpdate']>[0]);
    return c.json({ ok: true });
  });

  // Development mode only (no bot token, not production), and only straight from loopback: init data for any
  // Telegram user, signed as a bot would, is a sign-in as that user.
  app.get('/tg/dev/init-data', loopbackOnly(), (c) => {
    if (!config.telegram.devMode || !deps.messenger) throw new DomainError('NOT_FOUND', `No such endpoint: GET ${c.req.path}`);
    const query = devQuery.parse(c.req.query());
    const { keys } = deps.messenger;
    const user = { id: query.id, first_name: query.first_name, username: query.username || undefined, language_code: query.language_code || undefined };
    const raw = signInitData({ user, authDate: Math.floor(Date.now() / 1000) - query.age, queryId: `dev${Date.now()}` }, keys);
    c.header('Cache-Control', 'no-store');
    return c.json({ initData: raw, user });
  });

  return app;
}

/** Everything Telegram on the gateway: the routes under /api, the bot behind the webhook and the Bot API stand-in. */
export function createTelegramArea(deps: {
  config: Config;
  log: Logger;
  auth: AccessTokenVerifier;
  /** `bot` is built by the composition root (accounts.ts): this area only routes its webhook and stand-in. */
  messenger: { service: MessengerService; token: ((form: URLSearchParams) => Promise<TokenEndpointAnswer>) | undefined; bot: WalletBot | undefined } | undefined;
}): { api: Hono<ApiEnv>; sandbox: Hono | undefined } {
  const { config, log } = deps;
  const telegram = config.telegram;
  const service = deps.messenger?.service;
  const bot = deps.messenger?.bot;
  const api = createTelegramApi({ config, log, auth: deps.auth, messenger: service, token: deps.messenger?.token, bot });
  const sandboxOn = telegram.enabled && telegram.apiRoot === `${config.publicUrl}${TELEGRAM_SANDBOX_PATH}`;
  return { api, sandbox: sandboxOn ? createTelegramSandbox({ bot, devMode: telegram.devMode, miniAppUrl: telegram.miniAppUrl }) : undefined };
}
