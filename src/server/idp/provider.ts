import type { IncomingMessage, ServerResponse } from 'node:http';
import type pg from 'pg';
import { eq } from 'drizzle-orm';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { Config } from '../config.ts';
import { isDatabaseUnavailable, type Db } from '../db/database.ts';
import { users } from '../db/schema.ts';
import type { Logger } from '../log.ts';
import type { UserService } from '../domain/users.ts';
import { createPostgresAdapter, pruneOidcPayloads } from './adapter.ts';
import type { SealedSettings, SecretsKey } from '../adapters/keys/port.ts';
import { refuseNulIds } from './nul-guard.ts';
import type { IdpSecrets } from './keys.ts';
import { handleInteraction } from './interactions.ts';
import { OPERATOR_CLIENT_ID } from './clients.ts';
import { allowInlineScript } from '../net/content-security-policy.ts';
import { createUserinfoEndpoint } from './userinfo.ts';
import { pruneRevokedGrants } from './revocations.ts';
import { MESSENGER_GRANT, registerMessengerGrant, type MessengerSignIn } from './messenger-grant.ts';
import { behindProxy } from '../net/client-address.ts';

export const MOUNT = '/oidc';
/** Everything a first-party client of ours is granted at once: no consent screen for our own app. */
export const FIRST_PARTY_SCOPE = 'openid email profile offline_access';
/** The scope the gateway's resource server knows; access tokens carry it when the client asks for it. */
export const API_SCOPE = 'wallet';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;background:#202025;color:#fff;max-width:540px;margin:0 auto;padding:48px 24px;text-align:center}a,button{color:#202025;background:#fff;border:0;border-radius:12px;padding:12px 20px;font-size:16px;text-decoration:none;display:inline-block}</style></head>
<body>${body}</body></html>`;
}

/** Submits the sign-out confirmation at once; the page's CSP names it by its hash. */
const LOGOUT_SCRIPT = "var f=document.getElementById('op.logoutForm');var i=document.createElement('input');i.type='hidden';i.name='logout';i.value='yes';f.appendChild(i);f.submit();";
/**
 * The API's scope is what our access tokens are for: an authorization request for no other resource gets it,
 * so the token response names it instead of an empty scope.
 */
function withApiScope(url: string, audience: string): string {
  const [path, query] = url.split('?', 2);
  if (path !== `${MOUNT}/auth` || query === undefined) return url;
  const params = new URLSearchParams(query);
  const scope = params.get('scope');
  const resources = params.getAll('resource');
  if (resources.some((resource) => resource !== audience) || scope === null || scope.split(' ').includes(API_SCOPE)) return url;
  params.set('scope', `${scope} ${API_SCOPE}`);
  return `${path}?${params.toString()}`;
}

/** When the user signed in: a code or refresh token carries it from the sign-in; a messenger grant sets its own. */
function authTimeOf(ctx: KoaContextWithOIDC | undefined): number | undefined {
  const entities = ctx?.oidc.entities;
  const sessionTime = entities?.Session?.authTime;
  return entities?.AuthorizationCode?.authTime ?? entities?.RefreshToken?.authTime ?? (typeof sessionTime === 'number' ? sessionTime : undefined);
}

export type IdentityProvider = {
  provider: Provider;
  /** The node handler for everything under /oidc (prefix still on the URL). */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  close: () => void;
};

/** The embedded OpenID provider at `${PUBLIC_URL}/oidc`: one public client, code + PKCE, rotating refresh tokens. */
export function createIdentityProvider(deps: {
  config: Config;
  db: Db;
  pool: pg.Pool;
  log: Logger;
  users: UserService;
  secrets: IdpSecrets;
  /** Where `secrets` came from: reread after another process rotated the signing key. */
  settings: SealedSettings;
  /** Stored tokens and sessions are looked up by a keyed hash under it (adapter.ts). */
  secretsKey: SecretsKey;
  /** Telegram sign-in (messenger-grant.ts): a grant of this provider, so its tokens are the same as e-mail sign-in's. */
  messenger?: MessengerSignIn;
}): IdentityProvider {
  const { config, log } = deps;
  const { oidc } = config;
  const origin = new URL(config.publicUrl).origin;

  // The user behind a token's subject, with the claims the OpenID scopes release (see `claims` below).
  const findAccount = async (sub: string) => {
    if (!UUID.test(sub)) return undefined;
    const [user] = await deps.db
      .select({ id: users.id, email: users.email, confirmed: users.emailConfirmedAt, language: users.language })
      .from(users)
      .where(eq(users.id, sub));
    if (!user) return undefined;
    return {
      accountId: user.id,
      claims: () => ({ sub: user.id, email: user.email ?? undefined, email_verified: user.confirmed !== null, locale: user.language === 'RUS' ? 'ru' : 'en' }),
    };
  };

  const configuration: Configuration = {
    adapter: refuseNulIds(createPostgresAdapter(deps.pool, deps.secretsKey)),
    jwks: { keys: deps.secrets.signingKeys as NonNullable<Configuration['jwks']>['keys'] },
    cookies: { keys: deps.secrets.cookieKeys, names: { session: '_wallet_session', interaction: '_wallet_interaction', resume: '_wallet_resume' } },
    clients: [
      {
        client_id: oidc.clientId,
        client_name: 'Wallet',
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        redirect_uris: [`${config.publicUrl}/auth/callback`, `${config.publicUrl}/auth/silent`],
        post_logout_redirect_uris: [`${config.publicUrl}/auth`],
        grant_types: ['authorization_code', 'refresh_token', ...(deps.messenger ? [MESSENGER_GRANT] : [])],
        response_types: ['code'],
        scope: `${FIRST_PARTY_SCOPE} ${API_SCOPE}`,
      },
      {
        // The operator console (/operator): its own pages and redirect, the same users; what it may do is decided
        // by the operator's role in the database on every request, not by the token.
        client_id: OPERATOR_CLIENT_ID,
        client_name: 'Operator console',
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        redirect_uris: [`${config.publicUrl}/operator/callback`],
        post_logout_redirect_uris: [`${config.publicUrl}/operator`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        scope: `openid email profile ${API_SCOPE}`,
      },
    ],
    // Code + PKCE only: no client may use the implicit or hybrid flows, so discovery does not offer them.
    responseTypes: ['code'],
    scopes: ['openid', 'email', 'profile', 'offline_access', API_SCOPE],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['locale'] },
    // The browser reads e-mail from the ID token: our access tokens are for the gateway, not for userinfo.
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => findAccount(sub),
    // issued_at_ms: the gateway compares it with the user's last password reset (iat has whole seconds only);
    // grant_id: the gateway refuses tokens of a revoked grant; auth_time: how recent the sign-in is (RFC 9068).
    extraTokenClaims: (ctx, token) => ({ issued_at_ms: Date.now(), grant_id: 'grantId' in token ? token.grantId : undefined, auth_time: authTimeOf(ctx) }),
    // Served by userinfo.ts: the provider's own refuses every token bound to a resource, which is every token we issue.
    discovery: { userinfo_endpoint: `${oidc.issuer}/me` },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      revocation: { enabled: true },
      introspection: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        // Our own app asked for the sign-out: confirm it without a question, keep a button for browsers without script.
        async logoutSource(ctx: KoaContextWithOIDC, form: string) {
          ctx.type = 'html';
          ctx.body = page(
            'Signing out',
            `${form}<p>Signing out…</p><button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<script>${LOGOUT_SCRIPT}</script>`,
          );
          allowInlineScript(ctx.res, LOGOUT_SCRIPT);
        },
        async postLogoutSuccessSource(ctx: KoaContextWithOIDC) {
          ctx.type = 'html';
          ctx.body = page('Signed out', `<p>You are signed out.</p><a href="${escapeHtml(config.publicUrl)}/auth">Continue</a>`);
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => oidc.audience,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resource) {
          if (resource !== oidc.audience) throw new errors.InvalidTarget();
          return { scope: API_SCOPE, audience: oidc.audience, accessTokenTTL: oidc.accessTokenTtl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    clientBasedCORS: (_ctx, requestOrigin) => requestOrigin === origin,
    interactions: { url: (_ctx, interaction) => `${MOUNT}/interaction/${interaction.uid}` },
    // The provider drops offline_access unless the request says prompt=consent, which a first-party app has no reason
    // to send: our own client gets its refresh token anyway (tied to the session, so signing out ends it).
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && (code.scopes.has('offline_access') || client.clientId === oidc.clientId),
    // Every use of a refresh token yields a new one; presenting a used one revokes the whole grant.
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: () => oidc.accessTokenTtl,
      AuthorizationCode: () => 60,
      IdToken: () => oidc.idTokenTtl,
      Interaction: () => 60 * 60,
      // A rotated token inherits what is left, so a chain of refreshes never outlives the first sign-in's lifetime.
      RefreshToken: (ctx) => {
        const rotated = ctx?.oidc?.entities.RotatedRefreshToken;
        return rotated ? Math.max(1, rotated.remainingTTL) : oidc.refreshTokenTtl;
      },
      Grant: () => oidc.refreshTokenTtl,
      Session: () => oidc.refreshTokenTtl,
    },
    async renderError(ctx, out, error) {
      log.warn({ err: error, error: out.error, description: out.error_description }, 'identity provider error page');
      ctx.type = 'html';
      ctx.body = page('Sign-in failed', `<p>Sign-in failed: ${escapeHtml(String(out.error_description ?? out.error ?? 'unknown error'))}</p><a href="${escapeHtml(config.publicUrl)}/auth">Back to sign-in</a>`);
    },
  };

  const provider = new Provider(oidc.issuer, configuration);
  if (deps.messenger) {
    registerMessengerGrant(provider, { signIn: deps.messenger, findAccount: configuration.findAccount ?? (async () => undefined), audience: oidc.audience, apiScope: API_SCOPE, oidcScope: FIRST_PARTY_SCOPE, accessTokenTtl: oidc.accessTokenTtl });
  }
  provider.proxy = behindProxy(config.trustProxy);
  const userinfo = createUserinfoEndpoint({ provider, settings: deps.settings, secrets: deps.secrets, issuer: oidc.issuer, audience: oidc.audience, findAccount });
  // A database that is away is no fault of ours: 503 with Retry-After, as the gateway answers, and a warning.
  const databaseAway = new WeakSet<object>();
  provider.on('server_error', (ctx: KoaContextWithOIDC, error: unknown) => {
    if (!isDatabaseUnavailable(error)) return log.error({ err: error }, 'identity provider failed');
    databaseAway.add(ctx);
    log.warn({ err: error }, 'identity provider: the database is unavailable');
  });
  provider.use(async (ctx, next) => {
    await next();
    if (databaseAway.has(ctx) && ctx.status === 500) {
      ctx.status = 503;
      ctx.set('retry-after', '5');
    }
  });
  const callback = provider.callback();

  const prune = setInterval(() => {
    pruneOidcPayloads(deps.pool).catch((error: unknown) => log.warn({ err: error }, 'pruning identity provider rows failed'));
    pruneRevokedGrants(deps.db, oidc.accessTokenTtl + 120).catch((error: unknown) => log.warn({ err: error }, 'pruning revoked grants failed'));
    deps.users.pruneThrottle().catch((error: unknown) => log.warn({ err: error }, 'pruning login throttle rows failed'));
  }, 10 * 60_000);
  prune.unref();

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const original = withApiScope(req.url ?? MOUNT, oidc.audience);
    const stripped = original.slice(MOUNT.length) || '/';
    const path = stripped.split('?')[0] ?? '/';
    if (path === '/me') {
      void userinfo(req, res).catch((error: unknown) => {
        const away = isDatabaseUnavailable(error);
        if (away) log.warn({ err: error }, 'userinfo: the database is unavailable');
        else log.error({ err: error }, 'userinfo failed');
        if (!res.headersSent) res.writeHead(away ? 503 : 500, { 'content-type': 'application/json', ...(away ? { 'retry-after': '5' } : {}) });
        res.end(JSON.stringify({ error: 'server_error' }));
      });
      return;
    }
    if (path.startsWith('/interaction/')) {
      void handleInteraction({ provider, users: deps.users, config, log }, req, res, path).catch((error: unknown) => {
        log.error({ err: error }, 'sign-in interaction failed');
        if (!res.headersSent) res.writeHead(303, { location: `${config.publicUrl}/auth/login` });
        res.end();
      });
      return;
    }
    // oidc-provider builds its URLs from originalUrl minus url, as under Express's app.use('/oidc', ...).
    Object.assign(req, { originalUrl: original });
    req.url = stripped.startsWith('/') ? stripped : `/${stripped}`;
    void callback(req, res);
  };

  return { provider, handle, close: () => clearInterval(prune) };
}
