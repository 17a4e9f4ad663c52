import { describe, expect, it } from 'vitest';
import { createRouteLabels } from '../../../../src/server/metrics/routes.ts';

describe('the route label of a request', () => {
  const label = createRouteLabels(['/api/health', '/api/:account/asset', '/api/:account/asset/transaction/:id', '/api/user/tg', '/api/:account/withdrawal/check-address', '/api/:account/withdrawal/:id', '/api/analytics/sourceConfig/', '/api/files/*']);

  it('is the gateway pattern, never the raw id', () => {
    expect(label('/api/health')).toBe('/api/health');
    expect(label('/api/5f0c3a57-0a53-4a34-9a8f-3f0e5c0b6f1d/asset')).toBe('/api/:account/asset');
    expect(label('/api/5f0c3a57-0a53-4a34-9a8f-3f0e5c0b6f1d/asset/transaction/77')).toBe('/api/:account/asset/transaction/:id');
    expect(label('/api/analytics/sourceConfig/')).toBe('/api/analytics/sourceConfig/');
    expect(label('/api/files/a/b/c')).toBe('/api/files/*');
  });

  it('prefers a literal segment over a parameter', () => {
    expect(label('/api/user/tg')).toBe('/api/user/tg');
    expect(label('/api/acc/withdrawal/check-address')).toBe('/api/:account/withdrawal/check-address');
    expect(label('/api/acc/withdrawal/0xabc')).toBe('/api/:account/withdrawal/:id');
  });

  it('puts unknown API paths and everything outside /api in a few fixed labels', () => {
    expect(label('/api/nothing/here/at/all')).toBe('unmatched');
    expect(label('/api/acc//asset')).toBe('unmatched');
    expect(label('/home/asset/BTC/send')).toBe('page');
    expect(label('/_astro/app.3f9a.js')).toBe('/_astro/*');
    expect(label('/sandbox/devnet/deposit')).toBe('/sandbox/*');
    expect(label('/oidc/token')).toBe('/oidc/token');
    expect(label('/oidc/interaction/abc123')).toBe('/oidc/interaction');
    expect(label('/oidc/whatever-a-client-sends')).toBe('/oidc/*');
  });

  it('stays bounded under a crawl of random paths', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) seen.add(label(`/api/${i}/asset/transaction/${i * 7}`));
    expect([...seen]).toEqual(['/api/:account/asset/transaction/:id']);
  });
});
