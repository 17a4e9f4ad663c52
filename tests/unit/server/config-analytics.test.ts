import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.ts';
import { formatAnalyticsReport, parseReportArgs } from '../../../src/server/cli/analytics.ts';
import { createSecurityHeaders } from '../../../src/server/http/security-headers.ts';

describe('analytics configuration (issue 20)', () => {
  it('is on by default with a generated key and the gateway as data plane and config URL', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://wallet.example/' });
    expect(config.analytics).toEqual({
      enabled: true,
      writeKey: undefined,
      dataPlaneUrl: 'https://wallet.example/api/analytics',
      configUrl: 'https://wallet.example/api/analytics',
      embedded: true,
      retentionDays: 180,
      rateLimit: 120,
    });
  });

  it('is off with ANALYTICS_WRITE_KEY=off, and points at another collector with its key', () => {
    expect(loadConfig({ ANALYTICS_WRITE_KEY: 'off' }).analytics).toMatchObject({ enabled: false, embedded: false, writeKey: undefined });
    const other = loadConfig({ ANALYTICS_WRITE_KEY: '2Qx9ZexampleKey', ANALYTICS_DATA_PLANE_URL: 'https://hosted.rudderlabs.com/', ANALYTICS_CONFIG_URL: 'https://api.rudderstack.com', ANALYTICS_RETENTION_DAYS: '30' }).analytics;
    expect(other).toMatchObject({ enabled: true, embedded: false, writeKey: '2Qx9ZexampleKey', dataPlaneUrl: 'https://hosted.rudderlabs.com', configUrl: 'https://api.rudderstack.com', retentionDays: 30 });
  });

  it('refuses what cannot work, in one line naming the variable, never printing the key', () => {
    expect(() => loadConfig({ ANALYTICS_DATA_PLANE_URL: 'https://collector.example', ANALYTICS_CONFIG_URL: 'https://collector.example' })).toThrow(/ANALYTICS_WRITE_KEY is required/);
    expect(() => loadConfig({ ANALYTICS_DATA_PLANE_URL: 'ftp://x' })).toThrow(/^ANALYTICS_DATA_PLANE_URL is invalid/);
    expect(() => loadConfig({ ANALYTICS_WRITE_KEY: 'has spaces in it' })).toThrow(/ANALYTICS_WRITE_KEY is invalid \(got "\*\*\*"\)/);
    for (const bad of ['0', '-1', '1.5', '4000']) expect(() => loadConfig({ ANALYTICS_RETENTION_DAYS: bad }), bad).toThrow(/^ANALYTICS_RETENTION_DAYS is invalid/);
  });
});

describe('npm run analytics -- report', () => {
  it('takes report and --days N only', () => {
    expect(parseReportArgs(['report'])).toEqual({ days: 7 });
    expect(parseReportArgs(['report', '--days', '30'])).toEqual({ days: 30 });
    for (const bad of [[], ['show'], ['report', '--days', '0'], ['report', '--days', 'x'], ['report', '--weeks', '2'], ['report', 'extra']]) expect(parseReportArgs(bad), bad.join(' ')).toBeUndefined();
  });

  it('prints events per day and name, the app type split of load, and the top pages', () => {
    const text = formatAnalyticsReport({
      days: 7,
      perDay: [{ day: '2026-11-23', type: 'track', name: 'load', count: 4 }],
      appTypes: [
        { appType: 'web', count: 3 },
        { appType: 'tg', count: 1 },
      ],
      topPages: [{ path: '/home', count: 9 }],
    });
    expect(text).toMatch(/2026-11-23\s+track\s+load\s+4/);
    expect(text).toMatch(/web\s+3\s+75\.0%/);
    expect(text).toMatch(/tg\s+1\s+25\.0%/);
    expect(text).toMatch(/\/home\s+9/);
    expect(formatAnalyticsReport({ days: 1, perDay: [], appTypes: [], topPages: [] })).toMatch(/\(no events\)/);
  });
});

describe('the pages may reach the analytics collector, and nothing more', () => {
  const connectSrc = (env: Record<string, string>) => {
    const headers = new Map<string, string>();
    const res = { setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), String(value)), getHeader: (name: string) => headers.get(name.toLowerCase()), writeHead: () => res };
    createSecurityHeaders(loadConfig({ PUBLIC_URL: 'https://wallet.example', ...env }))({ method: 'GET', url: '/home', headers: {} } as never, res as never);
    return (headers.get('content-security-policy') ?? '').split(';').find((part) => part.trim().startsWith('connect-src'))?.trim().split(/\s+/).slice(1);
  };

  it('names only our own origin for the embedded data plane, and another collector when configured', () => {
    expect(connectSrc({})).toEqual(["'self'", 'https://wallet.example']);
    expect(connectSrc({ ANALYTICS_WRITE_KEY: 'source-key-1', ANALYTICS_DATA_PLANE_URL: 'https://dp.example/x', ANALYTICS_CONFIG_URL: 'https://api.rudderstack.com' })).toEqual([
      "'self'",
      'https://wallet.example',
      'https://api.rudderstack.com',
      'https://dp.example',
    ]);
    expect(connectSrc({ ANALYTICS_WRITE_KEY: 'off', ANALYTICS_DATA_PLANE_URL: 'https://dp.example' })).toEqual(["'self'", 'https://wallet.example']);
  });
});
