/**
 * The development stand-ins (the devnet's faucet and failure switch, the sandboxes' pages and lists, the development
 * Telegram init data) can mint money or sign anyone in: they answer only a request that comes straight from this
 * machine. That is the socket's own address, never a header: a loopback socket with any forwarding header is a
 * local proxy passing on someone else's request, so it is refused too. Refused requests get the same 404 as a path
 * that does not exist. Production mounts none of them (api.ts).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';

/** Headers a proxy adds to say whom it forwards for (RFC 7239 and the common de facto ones). */
export const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'x-client-ip', 'true-client-ip', 'cf-connecting-ip', 'via'] as const;

/** 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.toLowerCase().replace(/^::ffff:/, '');
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true;
  return address === '::1' || /^(?:0{1,4}:){7}0{0,3}1$/.test(address);
}

/** Straight from loopback: the socket's peer is this machine and no proxy header says it speaks for another. */
export function isStraightFromLoopback(remoteAddress: string | undefined, headers: IncomingHttpHeaders): boolean {
  return isLoopbackAddress(remoteAddress) && FORWARDING_HEADERS.every((name) => headers[name] === undefined);
}

/** Hono middleware: anything but a direct loopback request is answered 404, as if the route did not exist. */
export function loopbackOnly(): MiddlewareHandler {
  return async (c, next) => {
    // Without the node request (an in-process fetch) nothing proves where it came from: refused.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (!incoming || !isStraightFromLoopback(incoming.socket.remoteAddress, incoming.headers)) {
      return c.json({ exceptionCode: 'NOT_FOUND', message: `No such endpoint: ${c.req.method} ${c.req.path}` }, 404);
    }
    return next();
  };
}
