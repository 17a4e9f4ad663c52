import type { IncomingMessage, ServerResponse } from 'node:http';
import compression from 'compression';

/** Below this an answer goes as it is: gzip's header and a compressor's set-up cost more than they would save. */
export const COMPRESS_THRESHOLD = 1024;

/**
 * The length node already knows of an answer with no Content-Length header: the gateway's adapter
 * (`@hono/node-server`) hands a JSON answer's length to node's own field rather than as a header.
 */
function knownLength(res: ServerResponse): number | undefined {
  const length = (res as ServerResponse & { _contentLength?: unknown })._contentLength;
  return typeof length === 'number' ? length : undefined;
}

export type Compressor = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * The compressor in front of every answer. Its threshold reads only the Content-Length header, which the gateway's
 * JSON answers do not carry (above), so it gzipped every small one; its filter now reads the length node was given.
 */
export function createCompressor(): Compressor {
  const small = (res: ServerResponse) => {
    const length = knownLength(res);
    return length !== undefined && length < COMPRESS_THRESHOLD;
  };
  return compression({ threshold: COMPRESS_THRESHOLD, filter: (req, res) => !small(res as ServerResponse) && compression.filter(req, res) }) as unknown as Compressor;
}
