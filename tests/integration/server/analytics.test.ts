import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { freePort } from '../../support/server.ts';
import { startInProcess, type InProcessServer } from '../../support/in-process.ts';
import { purgeAnalyticsEvents } from '../../../src/server/domain/analytics.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
type Source = { writeKey: string; dataPlaneUrl: string; configUrl: string };

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
let counter = 0;
function event(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    type,
    messageId: `msg-${Date.now()}-${counter}`,
    anonymousId: 'anon-1',
    channel: 'web',
    originalTimestamp: new Date().toISOString(),
    context: { page: { path: '/home' }, library: { name: 'RudderLabs JavaScript SDK', version: '3.34.1' }, sessionId: Date.now() },
    integrations: { All: true },
    ...extra,
  };
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: { exceptionCode?: string; message?: string; ok?: boolean } }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { exceptionCode?: string; message?: string } };
}

/** Issue 20: the embedded data plane the SDK talks to when no other collector is configured. */
describe('the embedded analytics data plane (SPEC §7 Analytics)', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let dataDir: string;
  let source: Source;
  let pool: pg.Pool;
  // An empty ANALYTICS_WRITE_KEY is unset: the key is generated (the tests' default is off).
  let port: number;
  const env = () => ({ DATABASE_URL: database.url, DATA_DIR: dataDir, ANALYTICS_WRITE_KEY: '', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    dataDir = await mkdtemp(join(tmpdir(), 'wallet-analytics-'));
    port = await freePort();
    server = await startInProcess(env());
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    source = ((await (await fetch(`${server.url}/api/client-config`)).json()) as { analytics: Source }).analytics;
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('the client config names a generated write key and the gateway as data plane and config URL', () => {
    expect(source.writeKey).toMatch(/^[\w-]{32}$/);
    expect(source.dataPlaneUrl).toBe(`${server.url}/api/analytics`);
    expect(source.configUrl).toBe(`${server.url}/api/analytics`);
  });

  it('answers the source configuration the SDK asks for, and refuses a wrong key', async () => {
    const right = await fetch(`${source.configUrl}/sourceConfig/?p=npm&v=3.34.1&build=modern&writeKey=${source.writeKey}`, { headers: { authorization: basic(source.writeKey) } });
    expect(right.status).toBe(200);
    const body = (await right.json()) as { source: { id: string; enabled: boolean; writeKey: string; destinations: unknown[]; config: object } };
    expect(body.source).toMatchObject({ enabled: true, writeKey: source.writeKey, destinations: [] });
    expect(body.source.id).toBeTruthy();
    const wrong = await fetch(`${source.configUrl}/sourceConfig/?writeKey=not-the-key`);
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ exceptionCode: 'UNAUTHORIZED' });
  });

  it('refuses a wrong or missing write key with 401 in the error shape, and stores nothing', async () => {
    const batch = { batch: [event('page', { name: 'home' })], sentAt: new Date().toISOString() };
    const attempts: Array<Record<string, string>> = [{ authorization: basic('wrong-key-123') }, {}, { authorization: 'Bearer something' }];
    for (const headers of attempts) {
      const answer = await post(`${source.dataPlaneUrl}/v1/batch`, batch, headers);
      expect(answer.status).toBe(401);
      expect(answer.body.exceptionCode).toBe('UNAUTHORIZED');
      expect(typeof answer.body.message).toBe('string');
    }
    const beacon = await post(`${source.dataPlaneUrl}/beacon/v1/batch?writeKey=wrong-key-123`, batch, { 'content-type': 'text/plain' });
    expect(beacon.status).toBe(401);
    expect((await pool.query('SELECT count(*)::int AS n FROM analytics_events')).rows[0]).toEqual({ n: 0 });
  });

  it('refuses an oversized batch (413) and one with too many events (400)', async () => {
    const big = { batch: [event('track', { event: 'big', properties: { filler: 'x'.repeat(70 * 1024) } })] };
    const tooLarge = await post(`${source.dataPlaneUrl}/v1/batch`, big, { authorization: basic(source.writeKey) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.exceptionCode).toBe('PAYLOAD_TOO_LARGE');
    const many = { batch: Array.from({ length: 101 }, () => ({ type: 'track', event: 'x', messageId: `m-${counter++}`, anonymousId: 'a' })) };
    const tooMany = await post(`${source.dataPlaneUrl}/v1/batch`, many, { authorization: basic(source.writeKey) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.exceptionCode).toBe('VALIDATION');
  });

  it('refuses malformed events with 400 VALIDATION and a message naming the field', async () => {
    const auth = { authorization: basic(source.writeKey) };
    const cases: Array<[string, unknown, RegExp]> = [
      ['/v1/batch', 'not json', /not valid JSON/],
      ['/v1/batch', { batch: 'nope' }, /batch/],
      ['/v1/batch', { batch: [] }, /empty/],
      ['/v1/batch', { batch: [event('page', { messageId: undefined })] }, /batch\.0\.messageId/],
      ['/v1/batch', { batch: [event('screen')] }, /batch\.0\.type/],
      ['/v1/batch', { batch: [event('track')] }, /event name/],
      ['/v1/batch', { batch: [event('page', { anonymousId: undefined, userId: null })] }, /anonymousId or a userId/],
      ['/v1/batch', { batch: [event('page', { originalTimestamp: 'yesterday' })] }, /originalTimestamp/],
      ['/v1/batch', { batch: [42] }, /batch\.0/],
      ['/v1/page', event('track', { event: 'load' }), /type/],
      ['/v1/identify', [event('identify')], /JSON object|expected object|invalid/i],
    ];
    for (const [path, body, message] of cases) {
      const answer = await post(`${source.dataPlaneUrl}${path}`, body, auth);
      expect(answer.status, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      expect(answer.body.exceptionCode).toBe('VALIDATION');
      expect(answer.body.message).toMatch(message);
    }
  });

  it('stores page, track, identify, alias and group events by every transport, a retried event once', async () => {
    const auth = { authorization: basic(source.writeKey) };
    const load = event('track', { event: 'load', userId: 'account-1', properties: { account: 'account-1', appType: 'web' } });
    const page = event('page', { name: 'home', properties: { path: '/home' } });
    expect((await post(`${source.dataPlaneUrl}/v1/batch`, { batch: [load, page], sentAt: new Date().toISOString() }, auth)).status).toBe(200);
    // The same events again (a retry): stored once.
    expect((await post(`${source.dataPlaneUrl}/v1/batch`, { batch: [load, page] }, auth)).status).toBe(200);
    for (const type of ['identify', 'alias', 'group'] as const) {
      expect((await post(`${source.dataPlaneUrl}/v1/${type}`, event(type, { userId: 'account-1' }), auth)).status).toBe(200);
    }
    expect((await post(`${source.dataPlaneUrl}/v1/track`, event('track', { event: 'Page Unloaded', properties: { timeOnPage: 1234 } }), auth)).status).toBe(200);
    // sendBeacon: text/plain, the key in the query.
    const beacon = await post(`${source.dataPlaneUrl}/beacon/v1/batch?writeKey=${source.writeKey}`, { batch: [event('page', { name: 'settings', context: { page: { path: '/settings' } } })] }, { 'content-type': 'text/plain;charset=UTF-8' });
    expect(beacon.status).toBe(200);
    const rows = await pool.query<{ type: string; name: string | null; app_type: string | null; user_id: string | null; path: string | null }>(
      'SELECT type, name, app_type, user_id, path FROM analytics_events ORDER BY id',
    );
    expect(rows.rows.map((r) => `${r.type}:${r.name ?? ''}`)).toEqual(['track:load', 'page:home', 'identify:', 'alias:', 'group:', 'track:Page Unloaded', 'page:settings']);
    expect(rows.rows[0]).toMatchObject({ app_type: 'web', user_id: 'account-1', path: '/home' });
    expect(rows.rows[6]?.path).toBe('/settings');
  });

  it('keeps the events and the write key across a restart; the rate limit holds; the report reads them', async () => {
    await server.close();
    // The posts above counted against the default limit in the shared store: this one starts from nothing.
    await pool.query("DELETE FROM rate_limit WHERE key LIKE 'analytics%'");
    server = await startInProcess({ ...env(), ANALYTICS_RATE_LIMIT: '3' });
    const after = ((await (await fetch(`${server.url}/api/client-config`)).json()) as { analytics: Source }).analytics;
    expect(after.writeKey).toBe(source.writeKey);
    expect((await pool.query('SELECT count(*)::int AS n FROM analytics_events')).rows[0]).toEqual({ n: 7 });
    const auth = { authorization: basic(after.writeKey) };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(`${after.dataPlaneUrl}/v1/track`, event('track', { event: 'tap' }), auth)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);

    const { stdout } = await promisify(execFile)(process.execPath, ['src/server/cli/analytics.ts', 'report', '--days', '2'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: database.url, DATA_DIR: dataDir, ANALYTICS_WRITE_KEY: 'off' },
    });
    expect(stdout).toMatch(/Events per day and name:/);
    expect(stdout).toMatch(/track\s+load\s+1/);
    expect(stdout).toMatch(/track\s+tap\s+3/);
    expect(stdout).toMatch(/web\s+1\s+100\.0%/);
    expect(stdout).toMatch(/\/home\s+1/);
    expect(stdout).toMatch(/\/settings\s+1/);
  });

  it('deletes events older than the retention period', async () => {
    await pool.query("UPDATE analytics_events SET received_at = now() - interval '40 days' WHERE name = 'tap'");
    expect(await purgeAnalyticsEvents(pool, 30)).toBe(3);
    expect((await pool.query('SELECT count(*)::int AS n FROM analytics_events')).rows[0]).toEqual({ n: 7 });
  });
});
