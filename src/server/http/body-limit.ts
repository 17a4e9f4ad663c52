import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorBody } from './errors.ts';

/**
 * How large a request body may be, by path: the JSON API takes a few KB (its largest body, a sign-up, is under
 * 5 KB); a provider's webhook what the provider sends (a Telegram update with a long message stays well under
 * 1 MB); the identity provider its forms (oidc-provider itself stops reading at 56 KB). Anything else (the pages,
 * the sandboxes) the JSON size.
 */
export const BODY_LIMITS = { json: 16 * 1024, webhook: 1024 * 1024, oidc: 64 * 1024, analytics: 64 * 1024 } as const;

const WEBHOOK = /^\/api\/(?:webhooks\/[\w-]+|tg\/webhook)\/?$/;

export function bodyLimitFor(path: string): number {
  if (WEBHOOK.test(path)) return BODY_LIMITS.webhook;
  if (path === '/oidc' || path.startsWith('/oidc/')) return BODY_LIMITS.oidc;
  // The analytics SDK's batches: a browser's beacon carries at most 64 KB.
  if (path.startsWith('/api/analytics/')) return BODY_LIMITS.analytics;
  return BODY_LIMITS.json;
}

export function payloadTooLarge(limit: number): ErrorBody {
  return { exceptionCode: 'PAYLOAD_TOO_LARGE', message: `The request body is larger than ${limit} bytes` };
}

function tooLargeResponse(limit: number): Response {
  return new Response(JSON.stringify(payloadTooLarge(limit)), { status: 413, headers: { 'content-type': 'application/json' } });
}

/**
 * The gateway's request with its body bounded by the path's limit, or the 413 answer; undefined when it has no
 * body. A body with Content-Length is bounded by the HTTP parser (it never delivers more), so only the header is
 * compared; a chunked one is read here, counted as it arrives and never held beyond the limit. Handlers, and the
 * webhooks' signature checks, only ever see a bounded body.
 */
export function boundedRequest(request: Request): Promise<Request | Response> | undefined {
  // A GET or a HEAD has no body: nothing to bound, and no promise to wait for on the hottest paths.
  if (request.method === 'GET' || request.method === 'HEAD') return undefined;
  return bounded(request);
}

async function bounded(request: Request): Promise<Request | Response> {
  const limit = bodyLimitFor(new URL(request.url).pathname);
  const declared = request.headers.get('content-length');
  if (declared !== null && !request.headers.has('transfer-encoding')) return Number(declared) > limit ? tooLargeResponse(limit) : request;
  if (!request.body) return request;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // Stop reading; the node adapter drains what is left after the answer (or closes the connection).
      reader.releaseLock();
      return tooLargeResponse(limit);
    }
    chunks.push(value);
  }
  return new Request(request, { body: Buffer.concat(chunks) });
}

/** Beyond this a declared body is not worth reading to keep the connection: it is closed after the 413. */
const DRAIN_LIMIT = 8 * 1024 * 1024;
/** How long the rest of a body left unread may take to arrive before its connection is closed. */
const DRAIN_MS = 500;

/**
 * For what the node server hands to a handler outside the gateway (/oidc, the pages): once the answer is out, what is
 * left of a body the handler stopped reading (oidc-provider past its limit, a page that reads none) is read and
 * dropped, so the next request on that kept-alive connection is read at all; more than DRAIN_LIMIT, or slower than
 * DRAIN_MS, and the connection is closed instead. Without it the connection sat paused in the old body, and a request
 * the client sent on it was never answered until the keep-alive timeout reset it. The gateway's adapter
 * (`@hono/node-server`) does the same for /api itself.
 */
export function drainAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  res.once('finish', () => {
    if (req.complete || req.destroyed) return;
    let read = 0;
    const stop = () => {
      clearTimeout(timer);
      req.off('data', counted);
      req.off('end', stop);
      req.off('error', stop);
    };
    const close = () => {
      stop();
      req.socket.destroySoon();
    };
    const counted = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_LIMIT) close();
    };
    const timer = setTimeout(close, DRAIN_MS);
    timer.unref();
    req.on('data', counted);
    req.once('end', stop);
    req.once('error', stop);
    req.resume();
  });
}

/**
 * For the node server, before routing: a body whose Content-Length is over the path's limit is answered 413 at
 * once, whatever serves the path (the gateway, /oidc, the pages). Node reads and drops the unread body afterwards,
 * so a keep-alive connection stays usable.
 */
export function refuseDeclaredOversize(req: IncomingMessage, res: ServerResponse): boolean {
  const declared = req.headers['content-length'];
  if (declared === undefined || req.headers['transfer-encoding'] !== undefined) return false;
  const limit = bodyLimitFor((req.url ?? '/').split('?')[0] ?? '/');
  const length = Number(declared);
  if (!(length > limit)) return false;
  const body = JSON.stringify(payloadTooLarge(limit));
  res.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(length > DRAIN_LIMIT ? { connection: 'close' } : {}) });
  res.end(body);
  return true;
}
