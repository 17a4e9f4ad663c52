/**
 * Wallet protection (SPEC §7 User service): the passcode under /user/pinCode/* and the e-mail change under
 * /user/email-change*. Every route needs a bearer token; the guarded ones read the `pincode` header.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { EMAIL_PATTERN } from '../../lib/email.ts';
import type { ProtectionService } from '../domain/protection.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { payloadTooLarge } from './body-limit.ts';
import { readJsonBody } from './json-body.ts';
import { jsonInput } from './json-input.ts';
import type { Limits } from '../domain/limits.ts';
import { addressBucket, type TrustProxy } from '../net/client-address.ts';
import { requestAddress } from './rate-limit.ts';

const pinCode = z.string({ error: 'The pin code is required' }).regex(/^\d{4}$/, 'The pin code must be exactly 4 digits');
const pinBody = z.object({ pinCode });
const emailChangeBody = z.object({
  newEmail: z.string({ error: 'The e-mail is required' }).trim().max(254, 'The e-mail is too long').regex(EMAIL_PATTERN, 'The e-mail address is not valid'),
  pinCode: z.string().max(16).optional(),
});
const confirmBody = z.object({
  confirmationCode: z.string({ error: 'The confirmation code is required' }).trim().regex(/^[A-Za-z0-9]{4}$/, 'The confirmation code is 4 letters or digits'),
});

const jsonBody = (c: Context) => readJsonBody(c.req, { empty: {} });

/** SPEC §5: the header is sent only when non-empty; an empty one counts as none. */
function pincodeHeader(c: Context): string | undefined {
  const value = c.req.header('pincode')?.trim();
  return value ? value.slice(0, 16) : undefined;
}

export function createProtectionApi(deps: { protection: ProtectionService; auth: AccessTokenVerifier; limits: Limits; trustProxy: TrustProxy }): Hono<ApiEnv> {
  const { protection, limits } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);
  const limit = bodyLimit({ maxSize: 4 * 1024, onError: (c) => c.json(payloadTooLarge(4 * 1024), 413) });
  const userId = (c: Context<ApiEnv>) => c.get('principal').userId;
  // Every request that mails a code counts, per client address and per user (limits.ts).
  const mailsCode = (c: Context<ApiEnv>) => limits.enforce(['codesPerClient', addressBucket(requestAddress(c, deps.trustProxy))], ['codesPerUser', userId(c)]);

  app.post('/user/pinCode/validate', auth, async (c) => {
    await protection.validate(userId(c), pincodeHeader(c));
    return c.json({ valid: true });
  });

  app.post('/user/pinCode/enable', auth, limit, jsonInput(pinBody), async (c) => {
    const body = c.req.valid('json');
    await protection.enable(userId(c), body.pinCode);
    return c.json({ pinCodeActive: true });
  });

  app.post('/user/pinCode/change', auth, limit, jsonInput(pinBody), async (c) => {
    const body = c.req.valid('json');
    await protection.change(userId(c), pincodeHeader(c), body.pinCode);
    return c.json({ pinCodeActive: true });
  });

  app.post('/user/pinCode/disable', auth, async (c) => {
    await protection.disable(userId(c), pincodeHeader(c));
    return c.json({ pinCodeActive: false });
  });

  app.post('/user/pinCode/reset', auth, async (c) => {
    await mailsCode(c);
    await protection.requestReset(userId(c));
    return c.json({ sent: true });
  });

  app.post('/user/pinCode/reset/confirm', auth, limit, jsonInput(confirmBody), async (c) => {
    const body = c.req.valid('json');
    await protection.confirmReset(userId(c), body.confirmationCode);
    return c.json({ pinCodeActive: false });
  });

  app.post('/user/email-change', auth, limit, jsonInput(emailChangeBody), async (c) => {
    const body = c.req.valid('json');
    await mailsCode(c);
    return c.json(await protection.startEmailChange(userId(c), body.newEmail, pincodeHeader(c) ?? (body.pinCode || undefined)));
  });

  app.post('/user/email-change/confirm', auth, limit, jsonInput(confirmBody), async (c) => {
    const body = c.req.valid('json');
    return c.json(await protection.confirmEmailChange(userId(c), body.confirmationCode));
  });

  app.post('/user/email-change/resend-confirmation', auth, limit, async (c) => {
    await jsonBody(c);
    await mailsCode(c);
    return c.json(await protection.resendEmailChange(userId(c)));
  });

  return app;
}
