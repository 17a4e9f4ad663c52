import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { duplexPair } from 'node:stream';
import type Provider from 'oidc-provider';
import { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * Telegram sign-in as a grant of the same identity provider: the token endpoint takes the mini app's init data
 * (and, to link, a one-time code), and answers with the access, refresh and ID tokens an e-mail sign-in gets.
 * The gateway's POST /api/auth/tg and /api/auth/tg/link reach it in process (`createTokenEndpointCaller`).
 */
export const MESSENGER_GRANT = 'urn:wallet:params:oauth:grant-type:telegram-init-data';

/** Resolves the user of a messenger sign-in; throws `{ code, message }` errors the grant passes on as `error`. */
/** The signed-in user and when Telegram signed the init data (seconds): a replayed one is no fresh sign-in. */
export type MessengerSignIn = (input: { initData: string; oneTimeCode: string | undefined }) => Promise<{ userId: string; authTime: number }>;

/** What a refused sign-in carries out of the provider: an SPEC §8 code as the OAuth `error`. */
export type CodedError = Error & { code: string };

function isCoded(error: unknown): error is CodedError {
  return error instanceof Error && typeof (error as Partial<CodedError>).code === 'string' && /^B2C_USM\d{4}$/.test((error as CodedError).code);
}

export function registerMessengerGrant(
  provider: Provider,
  deps: { signIn: MessengerSignIn; findAccount: NonNullable<Configuration['findAccount']>; audience: string; apiScope: string; oidcScope: string; accessTokenTtl: number },
): void {
  const handler = async (ctx: KoaContextWithOIDC): Promise<void> => {
    const params = ctx.oidc.params as Record<string, unknown>;
    const initData = typeof params.init_data === 'string' ? params.init_data : '';
    const oneTimeCode = typeof params.one_time_code === 'string' ? params.one_time_code : undefined;
    const client = ctx.oidc.client;
    if (!client) throw new errors.InvalidClient('client authentication failed');
    if (!initData) throw new errors.InvalidRequest('missing required parameter init_data');

    let accountId: string;
    let authTime: number;
    try {
      ({ userId: accountId, authTime } = await deps.signIn({ initData, oneTimeCode }));
    } catch (error) {
      if (isCoded(error)) throw new errors.CustomOIDCProviderError(error.code, error.message);
      throw error;
    }

    const account = await deps.findAccount(ctx, accountId);
    if (!account) throw new errors.InvalidGrant('the signed-in user does not exist');

    const grant = new provider.Grant({ accountId, clientId: client.clientId });
    grant.addOIDCScope(deps.oidcScope);
    grant.addResourceScope(deps.audience, deps.apiScope);
    const grantId = await grant.save();
    ctx.oidc.entity('Grant', grant);
    ctx.oidc.entity('Account', account);

    // Rotating like any other: the refresh grant renews it (its resource and scopes come from here and the grant).
    const rt = new provider.RefreshToken({
      accountId,
      client,
      grantId,
      gty: MESSENGER_GRANT,
      scope: `${deps.oidcScope} ${deps.apiScope}`,
      resource: deps.audience,
      rotations: 0,
      authTime,
    } as ConstructorParameters<Provider['RefreshToken']>[0]);
    // An entity before the access token is made: the access token's auth_time is read from it (provider.ts).
    ctx.oidc.entity('RefreshToken', rt);

    // The same JWT access token for the gateway as the authorization code grant issues (resource indicator).
    const at = new provider.AccessToken({ accountId, client, grantId, gty: MESSENGER_GRANT, scope: deps.apiScope });
    at.resourceServer = new provider.ResourceServer(deps.audience, {
      scope: deps.apiScope,
      audience: deps.audience,
      accessTokenTTL: deps.accessTokenTtl,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'RS256' } },
    });
    ctx.oidc.entity('AccessToken', at);
    const accessToken = await at.save();

    const refreshToken = await rt.save();

    const oidcScope = deps.oidcScope.split(' ').filter((scope) => scope !== 'offline_access').join(' ');
    const idToken = new provider.IdToken({ ...(await account.claims('id_token', oidcScope, {}, [])), auth_time: authTime }, { ctx });
    Object.assign(idToken, { scope: oidcScope });
    const idTokenValue = await idToken.issue({ use: 'idtoken' });

    ctx.body = {
      access_token: accessToken,
      expires_in: at.expiration,
      id_token: idTokenValue,
      refresh_token: refreshToken,
      scope: `${oidcScope} ${deps.apiScope}`,
      token_type: 'Bearer',
    };
  };
  provider.registerGrantType(MESSENGER_GRANT, handler, ['init_data', 'one_time_code', 'resource', 'scope']);
}

export type TokenEndpointAnswer = { status: number; body: Record<string, unknown> };

/**
 * Calls the provider's token endpoint inside this process, over an in-memory HTTP connection (a Duplex pair fed
 * to a listening-less http.Server): the same path, parsing and errors as a request from outside, no port needed.
 */
export function createTokenEndpointCaller(handle: (req: IncomingMessage, res: ServerResponse) => void, path: string) {
  const server = createServer(handle);
  return (form: URLSearchParams): Promise<TokenEndpointAnswer> => {
    const body = form.toString();
    const [serverSide, clientSide] = duplexPair();
    server.emit('connection', serverSide);
    return new Promise<TokenEndpointAnswer>((resolve, reject) => {
      const req = request(
        {
          createConnection: () => clientSide,
          path,
          method: 'POST',
          headers: { host: 'localhost', 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'application/json', connection: 'close' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            clientSide.destroy();
            serverSide.destroy();
            try {
              resolve({ status: res.statusCode ?? 500, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}
