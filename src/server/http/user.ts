import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { EMAIL_PATTERN } from '../../lib/email.ts';
import { FIAT_CURRENCIES, LANGUAGES, type UserService } from '../domain/users.ts';
import { FEEDBACK_MAX_LENGTH, type FeedbackService } from '../domain/feedback.ts';
import { payloadTooLarge } from './body-limit.ts';
import { jsonInput } from './json-input.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import type { Limits } from '../domain/limits.ts';
import { addressBucket } from '../net/client-address.ts';
import { requestAddress } from './rate-limit.ts';
import type { AnalyticsSource } from '../domain/analytics.ts';

const email = z
  .string({ error: 'The e-mail is required' })
  .trim()
  .max(254, 'The e-mail is too long')
  .regex(EMAIL_PATTERN, 'The e-mail address is not valid');
// Length rules live in the password policy; this only keeps absurd inputs away from the hasher.
const password = z.string({ error: 'The password is required' }).min(1, 'The password is required').max(4096, 'The password is too long');
const code = z.string({ error: 'The confirmation code is required' }).trim().min(1, 'The confirmation code is required').max(256, 'The confirmation code is not valid');

const signUpBody = z.object({ email, password, accountName: z.string().trim().min(1).max(64).default('Account') });
const confirmBody = z.object({ confirmationCode: code });
const resetBody = z.object({ email });
const resetConfirmBody = z.object({ password, confirmationCode: code });
const currencyParam = z.object({ currency: z.enum(FIAT_CURRENCIES, { error: `The currency must be one of ${FIAT_CURRENCIES.join(', ')}` }) });
const languageParam = z.object({ language: z.enum(LANGUAGES, { error: `The language must be one of ${LANGUAGES.join(', ')}` }) });

/** What the browser needs to sign in against whichever issuer is configured (public). */
export function clientConfig(config: Config, analytics?: AnalyticsSource) {
  return {
    oidc: {
      authority: config.oidc.issuer,
      clientId: config.oidc.clientId,
      redirectUri: `${config.publicUrl}/auth/callback`,
      silentRedirectUri: `${config.publicUrl}/auth/silent`,
      postLogoutRedirectUri: `${config.publicUrl}/auth`,
      scope: 'openid email profile offline_access',
      resource: config.oidc.audience,
    },
    supportEmail: config.supportEmail,
    /** 'Leave feedback' inside Telegram opens this chat (SUPPORT_TELEGRAM); absent when unset. */
    supportTelegram: config.supportTelegram,
    /** The buy/sell screen's buy entry: off without a card provider (CARD_PROVIDER=off, production without a real one). */
    buyEnabled: config.buy.provider !== 'off',
    /** The buy/sell screen's sell entry: SELL_ENABLED, and a payout provider to pay the card. */
    sellEnabled: config.sellEnabled && config.payout.provider !== 'off',
    /** CHAIN_ENV: the browser's address checks accept this chain environment's forms (bc/tb/bcrt...). */
    chainEnv: config.chains.env,
    /** The analytics SDK's source (SPEC §7 Analytics); absent while analytics is off. */
    ...(analytics ? { analytics } : {}),
  };
}

const feedbackBody = z.object({
  text: z.string({ error: 'The message is required' }).trim().min(1, 'The message is required').max(FEEDBACK_MAX_LENGTH, `The message has at most ${FEEDBACK_MAX_LENGTH} characters`),
  // Where support answers: optional, the account's own address is prefilled by the form.
  email: z.union([z.literal('').transform(() => null), email, z.null()]).optional().transform((value) => value ?? null),
});

/** SPEC §7 User service under /api, plus GET /client-config and 'Leave feedback' (POST /user/feedback). */
export function createUserApi(deps: { config: Config; users: UserService; auth: AccessTokenVerifier; limits: Limits; analytics?: AnalyticsSource | undefined; feedback: FeedbackService }): Hono<ApiEnv> {
  const { users, limits } = deps;
  const client = (c: { env: unknown }) => addressBucket(requestAddress(c, deps.config.trustProxy));
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);
  // Per route, not app.use('*'): mounted at the root of /api, a wildcard would reach every other area too.
  const limit = bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.json(payloadTooLarge(16 * 1024), 413) });

  app.get('/client-config', (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(clientConfig(deps.config, deps.analytics));
  });

  app.post('/user', limit, jsonInput(signUpBody, { empty: undefined }), async (c) => {
    const body = c.req.valid('json');
    await limits.enforce(['signUpPerClient', client(c)], ['signUpPerEmail', limits.emailKey(body.email)]);
    await users.signUp(body);
    return c.json({ email: body.email.toLowerCase(), confirmationSent: true }, 201);
  });

  app.get('/user', auth, async (c) => c.json(await users.profile(c.get('principal').userId)));

  app.post('/user/feedback', auth, limit, jsonInput(feedbackBody), async (c) => {
    const { userId } = c.get('principal');
    await limits.enforce(['feedbackPerUser', userId]);
    const body = c.req.valid('json');
    return c.json(await deps.feedback.leave(userId, { text: body.text, replyTo: body.email }), 201);
  });

  app.get('/user/auth', auth, async (c) => {
    const profile = await users.profile(c.get('principal').userId);
    return c.json({ tgAuth: profile.tgAuth });
  });

  app.post('/confirmation/confirm', limit, jsonInput(confirmBody, { empty: undefined }), async (c) => {
    const body = c.req.valid('json');
    await users.confirmEmail(body.confirmationCode);
    return c.json({ confirmed: true });
  });

  app.post('/password-reset', limit, jsonInput(resetBody, { empty: undefined }), async (c) => {
    const body = c.req.valid('json');
    await limits.enforce(['resetPerClient', client(c)], ['resetPerEmail', limits.emailKey(body.email)]);
    await users.requestPasswordReset(body.email);
    return c.json({ sent: true });
  });

  app.post('/password-reset/confirm', limit, jsonInput(resetConfirmBody, { empty: undefined }), async (c) => {
    const body = c.req.valid('json');
    await users.resetPassword(body.confirmationCode, body.password);
    return c.json({ reset: true });
  });

  app.post('/user/default-fiat-currency/update/:currency', auth, async (c) => {
    const { currency } = currencyParam.parse(c.req.param());
    return c.json(await users.setDefaultFiatCurrency(c.get('principal').userId, currency));
  });

  app.post('/user/language/:language', auth, async (c) => {
    const { language } = languageParam.parse(c.req.param());
    return c.json(await users.setLanguage(c.get('principal').userId, language));
  });

  return app;
}
