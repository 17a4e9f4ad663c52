/**
 * GET /api/{account}/asset answered from memory at the node server, before the Hono stack, when all it needs is
 * already there: the bearer token verified before (and not revoked since), its user known to own the account, and
 * the account's asset list cached (domain/assets.ts). Every open app polls this every 10 s: it is the gateway's most
 * frequent request, and the Hono stack around a cached answer (the Request and Response objects, the routers, the
 * middleware's promises, the call budget) was a quarter of its cost (issue 35 item 5).
 *
 * It answers exactly what the route in wallet.ts answers (the same JSON string, status and headers); anything
 * it does not know from memory (no token, a token not verified yet, a revocation being reread, another user's
 * account, a list not cached) goes the usual way, where the route's guard and handler decide. The caller has set
 * the request id and the security headers already, as for every request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AssetReader } from '../domain/assets.ts';
import { bearerToken } from '../net/bearer-token.ts';
import type { AccountOwners } from './account-owner.ts';
import type { AccessTokenVerifier } from './auth-middleware.ts';

/** The route's own path, with any query (the route reads none); the account as the database writes ids. */
const ASSET_PATH = /^\/api\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/asset(?:\?|$)/;

/** The asset list's headers, the same on both ways: its type and its length (without it node would chunk this one). */
export function assetListHeaders(json: string): Record<string, string> {
  return { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) };
}

/** True when it answered the request; false leaves the request untouched for the gateway. */
export type HotPath = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createBalancesHotPath(deps: { auth: Pick<AccessTokenVerifier, 'cached'>; owners: Pick<AccountOwners, 'known'>; assets: Pick<AssetReader, 'cached'> }): HotPath {
  return (req, res) => {
    if (req.method !== 'GET') return false;
    const account = ASSET_PATH.exec(req.url ?? '')?.[1];
    if (account === undefined) return false;
    const token = bearerToken(req.headers.authorization);
    const principal = token === undefined ? undefined : deps.auth.cached(token);
    if (!principal || !deps.owners.known(account, principal.userId)) return false;
    const json = deps.assets.cached(account);
    if (json === undefined) return false;
    res.writeHead(200, assetListHeaders(json));
    res.end(json);
    return true;
  };
}
