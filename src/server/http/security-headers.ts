import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Config } from '../config.ts';
import { ROUTES } from '../../lib/routes.ts';
import { CSP, parsePolicy } from '../net/content-security-policy.ts';

/** Telegram's web clients (web.telegram.org/k/, /a/, /z/) frame the mini app; frame-ancestors matches origins only. */
export const TELEGRAM_WEB_ORIGIN = 'https://web.telegram.org';

type Framing = 'none' | 'self' | 'telegram';

function pathOf(url: string | undefined): string {
  return (url ?? '/').split(/[?#]/)[0] ?? '/';
}

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** Who may put a page in a frame: Telegram the mini app, our own pages the silent sign-in, nobody anything else. */
export function framingOf(path: string): Framing {
  if (under(path, '/tg')) return 'telegram';
  // oidc-client-ts renews a session without a refresh token in a hidden iframe: /oidc/auth answers into /auth/silent.
  if (under(path, '/auth/silent') || under(path, '/oidc/auth')) return 'self';
  return 'none';
}

// The first segments of the wallet island's routes: the documents that may open the QR scanner (send).
const ISLAND_ROOTS = new Set(Object.values(ROUTES).map((route) => route.split('/')[1]));

/** The camera only for the documents that host the scanner: the wallet island's paths and the mini app. */
export function hostsScanner(path: string): boolean {
  return under(path, '/tg') || ISLAND_ROOTS.has(path.split('/')[1]);
}

const withSecure = (cookie: string) => (/;\s*secure\s*(;|$)/i.test(cookie) ? cookie : `${cookie}; Secure`);

/**
 * The browser-facing protections of every response (issue 14, item 10): CSP, framing, nosniff, referrer, camera,
 * HSTS and Secure cookies when PUBLIC_URL is https, and CORS preflights for our own origin only. Returns a handler
 * that sets them before routing; it answers (and returns true) a preflight from another origin itself.
 */
export function createSecurityHeaders(config: Config): (req: IncomingMessage, res: ServerResponse) => boolean {
  const own = new URL(config.publicUrl).origin;
  const https = own.startsWith('https:');
  const issuer = new URL(config.oidc.issuer).origin;
  // 'self' is the origin the browser used; PUBLIC_URL and the issuer are named too for a proxy that differs.
  const app = ["'self'", ...new Set([own, issuer])].join(' ');
  // The analytics SDK talks to its config URL and data plane; their origins only when they are another collector's.
  const analytics = config.analytics.enabled ? [config.analytics.configUrl, config.analytics.dataPlaneUrl].map((url) => new URL(url).origin) : [];
  const connect = ["'self'", ...new Set([own, issuer, ...analytics])].join(' ');
  const ancestors: Record<Framing, string> = { none: "'none'", self: "'self'", telegram: TELEGRAM_WEB_ORIGIN };

  const pagePolicy = (framing: Framing, scripts: string) =>
    [
      "default-src 'self'",
      `script-src ${scripts}`,
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self'",
      `connect-src ${connect}`,
      // The silent sign-in's hidden iframe loads the issuer.
      `frame-src ${app}`,
      // qr-scanner decodes in a worker it starts from a blob.
      "worker-src 'self' blob:",
      "manifest-src 'self'",
      "media-src 'self' blob:",
      "object-src 'none'",
      "base-uri 'none'",
      `form-action ${app}`,
      `frame-ancestors ${ancestors[framing]}`,
    ].join('; ');
  // The provider's own pages (sign-out, errors): inline styles, and a script only by its hash (allowInlineScript).
  const providerPolicy = (framing: Framing) =>
    `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action ${app}; base-uri 'none'; frame-ancestors ${ancestors[framing]}`;
  // JSON and the sandboxes' plain pages: nothing to run, nothing to frame.
  const apiPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

  return (req, res) => {
    const path = pathOf(req.url);
    const origin = req.headers.origin;
    if (req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined && origin !== own) {
      // A preflight from another origin gets no Access-Control-Allow-*: the browser then never sends the request.
      res.writeHead(403, { 'content-type': 'application/json', vary: 'Origin' });
      res.end(JSON.stringify({ exceptionCode: 'CORS_ORIGIN_REFUSED', message: 'Cross-origin requests are allowed only from this site' }));
      return true;
    }

    const framing = framingOf(path);
    const kind = under(path, '/api') || under(path, '/sandbox') ? 'api' : under(path, '/oidc') ? 'provider' : 'page';
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Referrer and permissions policies govern documents; /api answers JSON, never one (nosniff), so it goes without.
    if (!under(path, '/api')) {
      res.setHeader('Referrer-Policy', 'strict-origin-when-cross-origin');
      res.setHeader('Permissions-Policy', `camera=(${kind === 'page' && hostsScanner(path) ? 'self' : ''}), microphone=(), geolocation=(), payment=()`);
    }
    if (https) res.setHeader('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    // X-Frame-Options cannot name Telegram; there frame-ancestors alone speaks (it overrides X-Frame-Options anyway).
    if (framing !== 'telegram') res.setHeader('X-Frame-Options', framing === 'self' ? 'SAMEORIGIN' : 'DENY');
    res.setHeader(CSP, kind === 'api' ? apiPolicy : kind === 'provider' ? providerPolicy(framing) : pagePolicy(framing, "'self'"));

    // The handlers write their own headers with writeHead: the last moment to complete them is there. An API answer
    // over http has nothing to complete (no page policy, no cookie to make Secure): the hot path stays as it was.
    if (kind !== 'page' && !https) return false;
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, statusCode: number, ...rest: unknown[]) {
      const reason = typeof rest[0] === 'string' ? rest[0] : undefined;
      const headers = (reason === undefined ? rest[0] : rest[1]) as OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined;
      if (Array.isArray(headers)) {
        const seen = new Set<string>();
        for (let i = 0; i + 1 < headers.length; i += 2) {
          const name = String(headers[i]).toLowerCase();
          const value = headers[i + 1] as OutgoingHttpHeader;
          if (seen.has(name)) this.appendHeader(name, typeof value === 'number' ? String(value) : value);
          else this.setHeader(name, value);
          seen.add(name);
        }
      } else if (headers) {
        for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value);
      }
      const policy = this.getHeader(CSP);
      // Astro's header holds only script-src (with the hashes of its inline scripts, computed at build) and
      // style-src: it completes our page policy. A handler's complete policy (with default-src) stays as it is.
      if (kind === 'page' && typeof policy === 'string' && !/(^|;)\s*default-src/i.test(policy)) {
        const scripts = parsePolicy(policy).get('script-src');
        this.setHeader(CSP, pagePolicy(framing, scripts?.length ? scripts.join(' ') : "'self'"));
      }
      const cookies = this.getHeader('set-cookie');
      if (https && cookies !== undefined) {
        this.setHeader('set-cookie', (Array.isArray(cookies) ? cookies : [String(cookies)]).map(withSecure));
      }
      // Node keeps a statusMessage set beforehand when writeHead gets none.
      if (reason !== undefined) this.statusMessage = reason;
      return writeHead.call(this, statusCode);
    } as typeof res.writeHead;
    return false;
  };
}
