import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Sign-up and sign-in driven over HTTP as a browser would (authorization code + PKCE against /oidc), for tests
 * of any area that needs a signed-in user. Mails are read from the server's mail_outbox, so the server must run
 * without SMTP_URL and the caller passes its DATABASE_URL.
 */
export type Tokens = { accessToken: string; refreshToken: string; idToken: string; expiresIn: number };
export type SignedInUser = Tokens & { userId: string; accountId: string };

type ClientConfig = {
  oidc: { authority: string; clientId: string; redirectUri: string; silentRedirectUri: string; postLogoutRedirectUri: string; scope: string; resource: string };
  supportEmail: string;
};

/** A minimal cookie jar: enough for the provider's session and interaction cookies on one host. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now()));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** The server's own origin for every URL, whatever host PUBLIC_URL names (localhost versus 127.0.0.1). */
function onServer(baseUrl: string, url: string, relativeTo = baseUrl): string {
  const resolved = new URL(url, relativeTo);
  const base = new URL(baseUrl);
  resolved.protocol = base.protocol;
  resolved.host = base.host;
  return resolved.toString();
}

async function expectOk(response: Response, what: string): Promise<Response> {
  if (!response.ok) throw new Error(`${what} answered ${response.status}: ${await response.text()}`);
  return response;
}

export async function clientConfig(baseUrl: string, path = '/api/client-config'): Promise<ClientConfig> {
  const response = await expectOk(await fetch(`${baseUrl}${path}`), `GET ${path}`);
  return (await response.json()) as ClientConfig;
}

async function discovery(baseUrl: string, authority: string): Promise<{ authorization_endpoint: string; token_endpoint: string; revocation_endpoint: string; end_session_endpoint: string }> {
  const response = await expectOk(await fetch(onServer(baseUrl, `${authority}/.well-known/openid-configuration`)), 'discovery');
  return (await response.json()) as { authorization_endpoint: string; token_endpoint: string; revocation_endpoint: string; end_session_endpoint: string };
}

/** The link of the newest mail of a kind to an address, waiting a little for mails sent in the background. */
export async function readMailLink(databaseUrl: string, email: string, kind: 'confirm_email' | 'reset_password' | 'signup_existing' | 'messenger_linked', timeoutMs = 10_000): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await client.query<{ text: string }>('SELECT text FROM mail_outbox WHERE recipient = $1 AND kind = $2 ORDER BY id DESC LIMIT 1', [email.toLowerCase(), kind]);
      const link = result.rows[0]?.text.match(/https?:\/\/\S+/)?.[0];
      if (link) return link;
      if (Date.now() > deadline) throw new Error(`no ${kind} mail to ${email} in mail_outbox`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end();
  }
}

export function codeFromLink(link: string): string {
  const code = new URL(link).pathname.split('/').pop();
  if (!code) throw new Error(`no code in ${link}`);
  return code;
}

export async function signUp(baseUrl: string, user: { email: string; password: string }): Promise<void> {
  const response = await fetch(`${baseUrl}/api/user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password, accountName: 'Account' }),
  });
  await expectOk(response, 'POST /api/user');
}

export async function confirmEmail(baseUrl: string, code: string): Promise<Response> {
  return fetch(`${baseUrl}/api/confirmation/confirm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ confirmationCode: code }) });
}

export type AuthorizationStart = { jar: CookieJar; uid: string; verifier: string; state: string; config: ClientConfig; endpoints: Awaited<ReturnType<typeof discovery>> };

/**
 * GET /oidc/auth with PKCE, followed to the e-mail login page: returns the interaction uid and the browser's cookies.
 * `configPath` names another client's configuration (the operator console's: /api/operator/client-config).
 */
export async function startAuthorization(baseUrl: string, configPath?: string): Promise<AuthorizationStart> {
  const config = await clientConfig(baseUrl, configPath);
  const endpoints = await discovery(baseUrl, config.oidc.authority);
  const jar = new CookieJar();
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const url = new URL(onServer(baseUrl, endpoints.authorization_endpoint));
  url.search = new URLSearchParams({
    client_id: config.oidc.clientId,
    redirect_uri: config.oidc.redirectUri,
    response_type: 'code',
    scope: config.oidc.scope,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    nonce: randomBytes(16).toString('base64url'),
  }).toString();
  const uid = await followToLogin(baseUrl, url.toString(), jar);
  return { jar, uid, verifier, state, config, endpoints };
}

/** Follows an authorization request (built by any relying party) to the e-mail login page: the interaction uid. */
export async function followToLogin(baseUrl: string, authorizationUrl: string, jar: CookieJar): Promise<string> {
  let next = onServer(baseUrl, authorizationUrl);
  for (let hop = 0; hop < 5; hop += 1) {
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(response);
    const location = response.headers.get('location');
    if (!location) throw new Error(`the authorization request stopped at ${next} with ${response.status}: ${await response.text()}`);
    const target = new URL(location, next);
    const uid = target.searchParams.get('uid');
    if (target.pathname === '/auth/login/email' && uid) return uid;
    next = onServer(baseUrl, location, next);
  }
  throw new Error('the authorization request did not reach the login page');
}

/** Follows the provider from the login form's answer back to the redirect URI: the URL the relying party receives. */
export async function followToRedirect(baseUrl: string, afterLogin: string, jar: CookieJar, redirectUri: string): Promise<string> {
  let next = onServer(baseUrl, afterLogin);
  for (let hop = 0; hop < 5; hop += 1) {
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(response);
    const location = response.headers.get('location');
    if (!location) throw new Error(`the sign-in stopped at ${next} with ${response.status}: ${await response.text()}`);
    const target = new URL(location, next);
    if (target.toString().startsWith(redirectUri)) return target.toString();
    next = onServer(baseUrl, location, next);
  }
  throw new Error('the sign-in did not come back to the redirect URI');
}

/** POSTs the login form; resolves with the Location the server answered (the next hop or the login page with error). */
export async function submitLogin(baseUrl: string, start: AuthorizationStart, user: { email: string; password: string }): Promise<string> {
  const response = await fetch(`${baseUrl}/oidc/interaction/${start.uid}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: start.jar.header() },
    body: new URLSearchParams({ email: user.email, password: user.password }).toString(),
  });
  start.jar.store(response);
  const location = response.headers.get('location');
  if (response.status !== 303 || !location) throw new Error(`login answered ${response.status}: ${await response.text()}`);
  return new URL(location, baseUrl).toString();
}

/** Follows the provider back to the redirect URI and exchanges the code (with the PKCE verifier) for tokens. */
export async function finishAuthorization(baseUrl: string, start: AuthorizationStart, afterLogin: string): Promise<Tokens> {
  let next = onServer(baseUrl, afterLogin);
  let code: string | undefined;
  for (let hop = 0; hop < 5 && !code; hop += 1) {
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: start.jar.header() } });
    start.jar.store(response);
    const location = response.headers.get('location');
    if (!location) throw new Error(`the sign-in stopped at ${next} with ${response.status}: ${await response.text()}`);
    const target = new URL(location, next);
    if (target.toString().startsWith(start.config.oidc.redirectUri)) {
      if (target.searchParams.get('state') !== start.state) throw new Error('the state came back changed');
      code = target.searchParams.get('code') ?? undefined;
      if (!code) throw new Error(`the provider answered ${target.searchParams.get('error')}: ${target.searchParams.get('error_description')}`);
    } else {
      next = onServer(baseUrl, location, next);
    }
  }
  if (!code) throw new Error('the sign-in did not come back to the redirect URI');
  const response = await fetch(onServer(baseUrl, start.endpoints.token_endpoint), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: start.config.oidc.redirectUri, client_id: start.config.oidc.clientId, code_verifier: start.verifier }).toString(),
  });
  return tokensFrom(await expectOk(response, 'the token endpoint'), start.config.oidc.scope.split(' ').includes('offline_access'));
}

/** `refresh`: the client asks for offline access, so the answer must carry a refresh token (the wallet's does). */
async function tokensFrom(response: Response, refresh = true): Promise<Tokens> {
  const body = (await response.json()) as { access_token: string; refresh_token?: string; id_token?: string; expires_in: number };
  if (!refresh && body.id_token) return { accessToken: body.access_token, refreshToken: body.refresh_token ?? '', idToken: body.id_token, expiresIn: body.expires_in };
  if (!body.refresh_token || !body.id_token) throw new Error(`the token response lacks a refresh or ID token: ${JSON.stringify(Object.keys(body))}`);
  return { accessToken: body.access_token, refreshToken: body.refresh_token, idToken: body.id_token, expiresIn: body.expires_in };
}

/** A full sign-in of a confirmed user: authorization request, login form, code exchange. */
export async function signIn(baseUrl: string, user: { email: string; password: string }): Promise<Tokens> {
  const start = await startAuthorization(baseUrl);
  const afterLogin = await submitLogin(baseUrl, start, user);
  if (new URL(afterLogin).pathname === '/auth/login/email') throw new Error(`the login was refused: ${afterLogin}`);
  return finishAuthorization(baseUrl, start, afterLogin);
}

/** The refresh-token grant; resolves with the raw response so tests can look at refusals too. */
export async function refreshTokens(baseUrl: string, refreshToken: string): Promise<Response> {
  const config = await clientConfig(baseUrl);
  const endpoints = await discovery(baseUrl, config.oidc.authority);
  return fetch(onServer(baseUrl, endpoints.token_endpoint), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: config.oidc.clientId }).toString(),
  });
}

export async function refresh(baseUrl: string, refreshToken: string): Promise<Tokens> {
  return tokensFrom(await expectOk(await refreshTokens(baseUrl, refreshToken), 'the refresh-token grant'));
}

/**
 * Signs up a new user, confirms the e-mail from the outbox, signs in and returns the tokens with the user's id
 * (the token's `sub`) and first wallet account id. `databaseUrl` is the server's DATABASE_URL (for the mail).
 */
export async function signUpAndSignIn(
  baseUrl: string,
  user: { email: string; password: string; databaseUrl: string; confirmationLink?: (email: string) => Promise<string> },
): Promise<SignedInUser> {
  await signUp(baseUrl, user);
  // In production the outbox keeps no live link: such a test reads it from its SMTP server instead.
  const link = await (user.confirmationLink ?? ((email) => readMailLink(user.databaseUrl, email, 'confirm_email')))(user.email);
  await expectOk(await confirmEmail(baseUrl, codeFromLink(link)), 'POST /api/confirmation/confirm');
  const tokens = await signIn(baseUrl, user);
  const profile = await expectOk(await fetch(`${baseUrl}/api/user`, { headers: { authorization: `Bearer ${tokens.accessToken}` } }), 'GET /api/user');
  const { accounts } = (await profile.json()) as { accounts: Array<{ id: string }> };
  const accountId = accounts[0]?.id;
  if (!accountId) throw new Error('the new user has no wallet account');
  const payload = JSON.parse(Buffer.from(tokens.accessToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub: string };
  return { ...tokens, userId: payload.sub, accountId };
}
