import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/**
 * Which hops in front of the gateway are our own proxies (TRUST_PROXY): a count of the right-most hops (the
 * socket's peer first), or the proxies' addresses and networks. Every hop left of them is anyone's to forge.
 */
export type TrustProxy = { hops: number } | { proxies: BlockList };

export const NO_PROXY: TrustProxy = { hops: 0 };
const MAX_HOPS = 10;

/**
 * TRUST_PROXY's value: `off` (0 hops), `on` (1 hop: one proxy in front, as before this setting took counts),
 * a hop count, or a comma-separated list of proxy addresses and CIDR networks. A string is the problem.
 */
export function parseTrustProxy(value: string): TrustProxy | string {
  const text = value.trim().toLowerCase();
  if (text === 'off') return { hops: 0 };
  if (text === 'on') return { hops: 1 };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    return hops <= MAX_HOPS ? { hops } : `a hop count is at most ${MAX_HOPS}`;
  }
  const proxies = new BlockList();
  for (const entry of text.split(',').map((part) => part.trim())) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) return `"${entry}" is not an IP address or a CIDR network`;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) {
      proxies.addAddress(address, type);
      continue;
    }
    const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (bits < 0 || bits > (family === 4 ? 32 : 128)) return `"${entry}" has a bad prefix length`;
    proxies.addSubnet(address, bits, type);
  }
  return { proxies };
}

/** One hop as written by a proxy: IPv4-mapped IPv6 and ports stripped, so one client is one key. */
export function normalizeAddress(raw: string): string {
  let address = raw.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed?.[1]) address = bracketed[1];
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) address = address.slice(7);
  // Whatever else a proxy wrote stays a bounded key.
  return address.slice(0, 64);
}

function trusted(proxies: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && proxies.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The caller's address: the right-most hop that is not one of our proxies. The chain is every X-Forwarded-For
 * entry, left to right, then the socket's peer; each proxy appends the address it was called from, so only the
 * entries our own proxies wrote can be believed and everything left of them may be made up by the client.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  const socket = normalizeAddress(req.socket.remoteAddress ?? 'unknown');
  if ('hops' in trust && trust.hops === 0) return socket;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop !== '')
    .map(normalizeAddress);
  const chain = [...forwarded, socket];
  if ('hops' in trust) return chain[Math.max(0, chain.length - 1 - trust.hops)] ?? socket;
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    const hop = chain[i];
    if (hop !== undefined && !trusted(trust.proxies, hop)) return hop;
  }
  // Every hop is a proxy of ours: the left-most one is the closest thing to a client there is.
  return chain[0] ?? socket;
}

/**
 * The key a limit counts a client address under: an IPv6 client usually holds a whole /64, so it counts as one;
 * an IPv4 address counts alone.
 */
export function addressBucket(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** Whether any proxy is trusted at all (the identity provider then reads X-Forwarded-Proto and -Host). */
export function behindProxy(trust: TrustProxy): boolean {
  return !('hops' in trust) || trust.hops > 0;
}
