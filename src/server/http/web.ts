import type { IncomingMessage, ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sirv from 'sirv';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

const DIST = fileURLToPath(new URL('../../../dist/', import.meta.url));
export const CLIENT_DIR = `${DIST}client`;
const SERVER_ENTRY = `${DIST}server/entry.mjs`;

/** Thrown when `npm run build` has not produced the pages yet. */
export class MissingBuildError extends Error {}

/** Astro's output: hashed assets from dist/client (cached for good), everything else by Astro's node handler. */
export async function createWebHandler(): Promise<NodeHandler> {
  if (!existsSync(SERVER_ENTRY)) throw new MissingBuildError(`the pages are not built (${SERVER_ENTRY} is missing): run npm run build`);
  const entry = (await import(pathToFileURL(SERVER_ENTRY).href)) as { handler: NodeHandler };
  const assets = sirv(CLIENT_DIR, {
    etag: true,
    gzip: true,
    brotli: true,
    setHeaders(res, pathname) {
      res.setHeader('Cache-Control', pathname.startsWith('/_astro/') ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate');
    },
  });
  return (req, res, next) => {
    // sirv pipes a read stream without an error handler: a file removed since start (a rebuild under a running
    // server) would crash the process, so such a stream's error ends just this response.
    res.once('pipe', (source) => source.once('error', () => res.destroy()));
    assets(req, res, () => entry.handler(req, res, next));
  };
}
