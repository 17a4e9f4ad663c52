import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { UserService } from '../domain/users.ts';
import { addressBucket, clientAddress } from '../net/client-address.ts';
import { OPERATOR_CLIENT_ID } from './clients.ts';

type Deps = { provider: Provider; users: UserService; config: Config; log: Logger };

const loginForm = z.object({ email: z.string().max(320), password: z.string().max(4096) });
const MAX_FORM_BYTES = 16 * 1024;

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': '0' });
  res.end();
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) return undefined;
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** Our own client asks for nothing a user must weigh: it gets everything it may ask for. */
async function grantFirstParty(deps: Deps, details: Awaited<ReturnType<Provider['interactionDetails']>>, accountId: string): Promise<string> {
  const { provider, config } = deps;
  const clientId = String(details.params.client_id ?? '');
  if (clientId !== config.oidc.clientId && clientId !== OPERATOR_CLIENT_ID) throw new Error(`client ${clientId} is not a first-party client`);
  const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
  const grant = existing?.accountId === accountId ? existing : new provider.Grant({ accountId, clientId });
  // The API scope too: requested beside the OpenID ones (provider.ts adds it), it must not leave a consent prompt open.
  grant.addOIDCScope('openid email profile offline_access wallet');
  const missingClaims = details.prompt.details.missingOIDCClaims;
  if (Array.isArray(missingClaims)) grant.addOIDCClaims(missingClaims.filter((claim): claim is string => typeof claim === 'string'));
  grant.addResourceScope(config.oidc.audience, 'wallet');
  return grant.save();
}

/**
 * The provider's interaction routes under /oidc/interaction/:uid. GET sends a login prompt to the e-mail page
 * (or completes a consent prompt at once); POST .../login checks the form the e-mail page submits. Without the
 * interaction (expired, or another one's cookie) both restart the sign-in.
 */
export async function handleInteraction(deps: Deps, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const { provider, config } = deps;
  const match = /^\/interaction\/([\w-]{1,64})(\/login)?\/?$/.exec(path);
  const uid = match?.[1];
  // An interaction the provider no longer has (a bookmark, a reload after it expired, a form left open) starts the
  // sign-in again at once: the browser comes back to a fresh e-mail page, which keeps the e-mail typed.
  const restart = `${config.publicUrl}/auth/login/start`;
  if (!match || !uid) return redirect(res, restart);
  const isLogin = match[2] === '/login';
  const loginPage = `${config.publicUrl}/auth/login/email?uid=${encodeURIComponent(uid)}`;

  let details: Awaited<ReturnType<Provider['interactionDetails']>>;
  try {
    details = await provider.interactionDetails(req, res);
  } catch (error) {
    // No interaction cookie or an expired interaction: start the sign-in again from the entry.
    if (error instanceof errors.SessionNotFound) return redirect(res, restart);
    throw error;
  }
  if (details.uid !== uid) return redirect(res, restart);

  if (!isLogin) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return redirect(res, loginPage);
    if (details.prompt.name === 'login') return redirect(res, loginPage);
    const accountId = details.session?.accountId;
    if (details.prompt.name !== 'consent' || !accountId) return redirect(res, loginPage);
    const grantId = await grantFirstParty(deps, details, accountId);
    return redirect(res, await provider.interactionResult(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true }));
  }

  if (req.method !== 'POST') return redirect(res, loginPage);
  const form = await readForm(req);
  const parsed = loginForm.safeParse(form ? Object.fromEntries(form) : {});
  if (!parsed.success || parsed.data.email.trim() === '' || parsed.data.password === '') return redirect(res, `${loginPage}&error=1`);

  const result = await deps.users.checkLogin(parsed.data.email, parsed.data.password, addressBucket(clientAddress(req, config.trustProxy)));
  if (!result.ok) {
    if (result.reason === 'THROTTLED') return redirect(res, `${loginPage}&error=throttled&retryAfter=${Math.ceil(result.retryAfterMs / 1000)}`);
    return redirect(res, `${loginPage}&error=1`);
  }
  const grantId = await grantFirstParty(deps, details, result.userId);
  // What provider.interactionResult does, on the interaction already loaded: one database round trip less per login.
  details.result = { login: { accountId: result.userId, remember: true }, consent: { grantId } };
  await details.save(Math.max(1, details.exp - Math.floor(Date.now() / 1000)));
  redirect(res, details.returnTo);
}
