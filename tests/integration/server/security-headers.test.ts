import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { clientConfig, codeFromLink, confirmEmail, finishAuthorization, readMailLink, signUp, startAuthorization, submitLogin } from '../../support/auth.ts';

/** The policy as directive → sources. */
function directives(response: Response): Map<string, string[]> {
  const policy = response.headers.get('content-security-policy');
  expect(policy, `${response.url} has a Content-Security-Policy`).toBeTruthy();
  return new Map((policy ?? '').split(';').map((part) => part.trim().split(/\s+/)).filter((p) => p[0]).map(([name = '', ...sources]) => [name, sources]));
}

/** Every inline script of the page must be allowed by its hash, and nothing inline by 'unsafe-inline'. */
function expectInlineScriptsHashed(html: string, policy: Map<string, string[]>): number {
  const scriptSrc = policy.get('script-src') ?? policy.get('default-src') ?? [];
  expect(scriptSrc).not.toContain("'unsafe-inline'");
  expect(scriptSrc).not.toContain("'unsafe-eval'");
  const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '').filter((body) => body.trim() !== '');
  for (const body of inline) expect(scriptSrc).toContain(`'sha256-${createHash('sha256').update(body).digest('base64')}'`);
  return inline.length;
}

function expectCommonHeaders(response: Response): void {
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('referrer-policy')).toMatch(/^(strict-origin-when-cross-origin|no-referrer)$/);
  expect(response.headers.get('permissions-policy')).toMatch(/camera=\((self)?\)/);
}

describe('security headers (issue 14, item 10)', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url) });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('a shell page: a CSP with its inline scripts by hash, no framing, no camera, no HSTS over http', async () => {
    const response = await fetch(`${server.url}/auth/login`);
    expect(response.status).toBe(200);
    const policy = directives(response);
    expectInlineScriptsHashed(await response.text(), policy);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('default-src')).toEqual(["'self'"]);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('permissions-policy')).toContain('camera=()');
    expect(response.headers.get('strict-transport-security')).toBeNull();
    expectCommonHeaders(response);
  });

  it('the wallet page hashes the island loader, may use the camera (the QR scanner) and its blob worker', async () => {
    // As a device where someone signed in asks for it (elsewhere a wallet path is a redirect to sign in).
    const response = await fetch(`${server.url}/home/asset/BTC/send`, { headers: { cookie: 'signed_in=1' } });
    expect(response.status).toBe(200);
    const policy = directives(response);
    expect(expectInlineScriptsHashed(await response.text(), policy)).toBeGreaterThan(0);
    expect(response.headers.get('permissions-policy')).toContain('camera=(self)');
    expect(policy.get('worker-src')).toEqual(["'self'", 'blob:']);
    expect(policy.get('connect-src')).toContain("'self'");
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expectCommonHeaders(response);
  });

  it('/tg may be framed by Telegram Web only and may use the camera', async () => {
    const response = await fetch(`${server.url}/tg`);
    expect(response.status).toBe(200);
    const policy = directives(response);
    expect(expectInlineScriptsHashed(await response.text(), policy)).toBeGreaterThan(0);
    expect(policy.get('frame-ancestors')).toEqual(['https://web.telegram.org']);
    expect(response.headers.get('x-frame-options')).toBeNull();
    expect(response.headers.get('permissions-policy')).toContain('camera=(self)');
    expectCommonHeaders(response);
  });

  it('the silent sign-in page may be framed by the app itself only', async () => {
    const response = await fetch(`${server.url}/auth/silent`);
    expect(directives(response).get('frame-ancestors')).toEqual(["'self'"]);
    expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
  });

  it('/api answers carry a policy that allows nothing', async () => {
    const response = await fetch(`${server.url}/api/health`);
    expect(response.status).toBe(200);
    const policy = directives(response);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    // Document-only policies: a JSON answer is never rendered (nosniff), so they would be bytes on every answer.
    expect(response.headers.get('permissions-policy')).toBeNull();
    expect(response.headers.get('referrer-policy')).toBeNull();
  });

  it('the provider: interaction redirects carry the headers, the sign-out page runs its script by hash only', async () => {
    const user = { email: `csp-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery 9' };
    await signUp(server.url, user);
    await confirmEmail(server.url, codeFromLink(await readMailLink(database.url, user.email, 'confirm_email')));
    const start = await startAuthorization(server.url);
    const interaction = await fetch(`${server.url}/oidc/interaction/${start.uid}`, { redirect: 'manual', headers: { cookie: start.jar.header() } });
    expect(interaction.status).toBe(303);
    expect(directives(interaction).get('frame-ancestors')).toEqual(["'none'"]);
    expectCommonHeaders(interaction);
    // Over http the provider's cookies are not Secure (a browser would drop them).
    expect(interaction.headers.getSetCookie().every((line) => !/;\s*secure/i.test(line))).toBe(true);
    await finishAuthorization(server.url, start, await submitLogin(server.url, start, user));

    const { oidc } = await clientConfig(server.url);
    const logout = await fetch(`${server.url}/oidc/session/end?client_id=${oidc.clientId}&post_logout_redirect_uri=${encodeURIComponent(oidc.postLogoutRedirectUri)}`, { headers: { cookie: start.jar.header() } });
    expect(logout.status).toBe(200);
    const html = await logout.text();
    expect(html).toContain('op.logoutForm');
    const policy = directives(logout);
    expect(expectInlineScriptsHashed(html, policy)).toBe(1);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('a CORS preflight from another origin gets no Access-Control-Allow-*; the app origin keeps its answer', async () => {
    const preflight = (path: string, origin: string) =>
      fetch(`${server.url}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' } });
    for (const path of ['/api/user', '/oidc/token', '/oidc/token/revocation', '/oidc/jwks', '/home']) {
      const foreign = await preflight(path, 'https://evil.example');
      expect(foreign.status, path).toBe(403);
      expect([...foreign.headers.keys()].filter((name) => name.startsWith('access-control-allow')), path).toEqual([]);
    }
    const { oidc } = await clientConfig(server.url);
    const own = new URL(oidc.redirectUri).origin;
    const allowed = await preflight('/oidc/token', own);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(own);
  });
});

describe('security headers when PUBLIC_URL is https', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), PUBLIC_URL: 'https://wallet.example' });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('sends HSTS on pages, the API and the provider', async () => {
    for (const path of ['/auth/login', '/home', '/tg', '/api/health', '/oidc/.well-known/openid-configuration']) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.headers.get('strict-transport-security'), path).toBe('max-age=31536000; includeSubDomains');
    }
  });

  it('marks the preference cookies Secure', async () => {
    const response = await fetch(`${server.url}/prefs?lang=RUS&theme=dark&back=/auth`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    const cookies = response.headers.getSetCookie();
    expect(cookies).toHaveLength(2);
    for (const line of cookies) expect(line).toMatch(/;\s*Secure(;|$)/i);
  });

  it("marks the provider's interaction and session cookies Secure", async () => {
    const { oidc } = await clientConfig(server.url);
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: oidc.clientId,
      redirect_uri: oidc.redirectUri,
      response_type: 'code',
      scope: oidc.scope,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: randomBytes(8).toString('base64url'),
    });
    const response = await fetch(`${server.url}/oidc/auth?${query}`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    const cookies = response.headers.getSetCookie();
    expect(cookies.some((line) => line.startsWith('_wallet_interaction='))).toBe(true);
    for (const line of cookies) expect(line).toMatch(/;\s*secure(;|$)/i);
  });
});
