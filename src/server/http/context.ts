import type { HttpBindings } from '@hono/node-server';
import type { Database } from '../db/database.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';

/** The signed-in caller, set by the bearer-token middleware of the sign-in area. */
export type Principal = {
  userId: string;
  sub: string;
  /** When the user signed in (seconds since the epoch), from the token's auth_time; unknown for some issuers. */
  authTime?: number;
};

/**
 * Hono environment shared by every /api sub-app: `c.get('principal')` after authentication; `c.env.incoming` is
 * Node's request when the node server calls (absent when a test calls `fetch` with a Request of its own).
 */
export type ApiEnv = { Bindings: Partial<HttpBindings> | undefined; Variables: { principal: Principal; log: Logger } };

/** What every area of the gateway is built from; each area adds its own services to this in main.ts. */
export type GatewayDeps = { config: Config; log: Logger; database: Database };
