import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { addressBucket, clientAddress, normalizeAddress, parseTrustProxy, type TrustProxy } from '../../../../src/server/net/client-address.ts';
import { ConfigError, loadConfig } from '../../../../src/server/config.ts';

const request = (socket: string, forwarded?: string | string[]) =>
  ({ socket: { remoteAddress: socket }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

function trust(value: string): TrustProxy {
  const parsed = parseTrustProxy(value);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

/** Issue 14 item 6: the client is the right-most hop that is not one of our proxies. */
describe('client address', () => {
  it('ignores X-Forwarded-For entirely with TRUST_PROXY=off', () => {
    expect(clientAddress(request('203.0.113.9', '1.2.3.4'), trust('off'))).toBe('203.0.113.9');
    expect(clientAddress(request('::ffff:203.0.113.9'), trust('off'))).toBe('203.0.113.9');
  });

  it('takes the hop our one proxy appended, not a first hop the client made up (on = 1 hop)', () => {
    expect(trust('on')).toEqual({ hops: 1 });
    const proxy = '10.0.0.2';
    expect(clientAddress(request(proxy, '198.51.100.7'), trust('on'))).toBe('198.51.100.7');
    // The client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the real address.
    expect(clientAddress(request(proxy, '1.1.1.1, 198.51.100.7'), trust('on'))).toBe('198.51.100.7');
    expect(clientAddress(request(proxy, '1.1.1.1, 2.2.2.2, 198.51.100.7'), trust('1'))).toBe('198.51.100.7');
    // Several header lines count as one list, in order.
    expect(clientAddress(request(proxy, ['1.1.1.1', '198.51.100.7']), trust('1'))).toBe('198.51.100.7');
  });

  it('counts hops from the socket: two proxies skip the last entry the first proxy wrote', () => {
    // client → CDN (appends client) → load balancer (appends CDN) → gateway
    const chain = '6.6.6.6, 198.51.100.7, 192.0.2.10';
    expect(clientAddress(request('10.0.0.2', chain), trust('2'))).toBe('198.51.100.7');
    expect(clientAddress(request('10.0.0.2', chain), trust('3'))).toBe('6.6.6.6');
    // Fewer hops than trusted: the left-most there is.
    expect(clientAddress(request('10.0.0.2', '198.51.100.7'), trust('5'))).toBe('198.51.100.7');
    expect(clientAddress(request('10.0.0.2'), trust('2'))).toBe('10.0.0.2');
  });

  it('with a proxy list, walks left past our own proxies to the first address that is not one', () => {
    const ours = trust('10.0.0.0/8, 192.0.2.10, 2001:db8:ffff::/48');
    expect(clientAddress(request('10.1.2.3', '6.6.6.6, 198.51.100.7, 192.0.2.10'), ours)).toBe('198.51.100.7');
    expect(clientAddress(request('10.1.2.3', '198.51.100.7, 10.9.9.9'), ours)).toBe('198.51.100.7');
    expect(clientAddress(request('2001:db8:ffff:1::5', '2001:db8:1::7'), ours)).toBe('2001:db8:1::7');
    // A request that did not come through our proxy: its own header is not believed.
    expect(clientAddress(request('203.0.113.9', '198.51.100.7'), ours)).toBe('203.0.113.9');
    // A spoofed first hop that names one of our proxies does not help either.
    expect(clientAddress(request('10.1.2.3', '10.0.0.1, 198.51.100.7'), ours)).toBe('198.51.100.7');
    // Only proxies in the chain: the left-most.
    expect(clientAddress(request('10.1.2.3', '10.0.0.7'), ours)).toBe('10.0.0.7');
  });

  it('normalizes what proxies write: ports, brackets and IPv4-mapped IPv6', () => {
    expect(normalizeAddress(' 198.51.100.7:4711 ')).toBe('198.51.100.7');
    expect(normalizeAddress('[2001:DB8::1]:443')).toBe('2001:db8::1');
    expect(normalizeAddress('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(normalizeAddress('x'.repeat(500))).toHaveLength(64);
  });

  it('puts an IPv6 client in its /64 and leaves IPv4 alone', () => {
    expect(addressBucket('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('198.51.100.7')).toBe('198.51.100.7');
  });

  it('reads TRUST_PROXY as off, on, a hop count or addresses, refusing anything else', () => {
    expect(loadConfig({}).trustProxy).toEqual({ hops: 0 });
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(clientAddress(request('10.0.0.1', '1.1.1.1, 198.51.100.7'), loadConfig({ TRUST_PROXY: '10.0.0.1' }).trustProxy)).toBe('198.51.100.7');
    for (const bad of ['yes', '11', '10.0.0.0/33', '10.0.0.1, nonsense', '10.0.0.0/8/1']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY is invalid/);
  });
});
