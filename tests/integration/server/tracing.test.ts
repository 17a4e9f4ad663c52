import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { registerHooks } from 'node:module';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess } from '../../support/in-process.ts';
import { freePort } from '../../support/server.ts';
import { TEST_MNEMONIC, TEST_SECRETS_KEY, waitFor } from '../../support/custody.ts';

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: { key: string; value: AnyValue }[]; status?: { code?: number } };
type OtlpBody = { resourceSpans: { resource: { attributes: { key: string; value: AnyValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

/**
 * OTEL_EXPORTER_OTLP_ENDPOINT as an operator sets it: the server composed as `npm start` composes it sends its spans
 * to a local OTLP/HTTP receiver (JSON, POST /v1/traces) — a span per /api request with its route pattern and status,
 * one per worker job run with its chain node calls inside — and nothing secret in them. Without it nothing is sent
 * and no OpenTelemetry module is even loaded.
 */
describe('OpenTelemetry tracing', () => {
  let database: TestDatabase;
  let receiver: Server;
  let collectorUrl: string;
  const bodies: { path: string; contentType: string | undefined; authorization: string | undefined; text: string }[] = [];
  // Every module this process loads from now on whose name says OpenTelemetry (vitest imports node_modules natively).
  const loaded: string[] = [];
  const hooks = registerHooks({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      if (/opentelemetry|@hono[\\/]otel/.test(`${specifier} ${resolved.url}`)) loaded.push(resolved.url);
      return resolved;
    },
  });
  const env = () => ({ DATABASE_URL: database.url, WALLET_SEED: TEST_MNEMONIC, SECRETS_KEY: TEST_SECRETS_KEY, RATES_WALK_MS: '0', WORKER_POLL_MS: '100' });
  const jobRuns = async (name: string) => {
    const pool = new pg.Pool({ connectionString: database.url });
    try {
      return (await pool.query<{ runs: number }>('SELECT runs FROM job_schedule WHERE name = $1', [name])).rows[0]?.runs ?? 0;
    } finally {
      await pool.end();
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    const port = await freePort();
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push({ path: req.url ?? '', contentType: req.headers['content-type'], authorization: req.headers.authorization, text: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
    collectorUrl = `http://127.0.0.1:${port}`;
  }, 120_000);
  afterAll(async () => {
    hooks.deregister();
    await new Promise((resolve) => receiver?.close(resolve));
    await database?.drop();
  });

  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT: nothing is sent and no OpenTelemetry module is loaded', async () => {
    const server = await startInProcess(env());
    try {
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
      await waitFor('a job run', async () => (await jobRuns('chain.deposits:BITCOIN')) > 0, 30_000);
    } finally {
      await server.close();
    }
    expect(bodies).toEqual([]);
    expect(loaded).toEqual([]);
  });

  it('sends a span per request and per job run, with chain calls inside, and nothing secret', async () => {
    const server = await startInProcess({ ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: `${collectorUrl}/`, OTEL_SERVICE_NAME: 'wallet-under-test', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-key' });
    const account = randomUUID();
    const runsBefore = await jobRuns('chain.deposits:BITCOIN');
    try {
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
      expect((await fetch(`${server.url}/api/${account}/asset?address=bc1qsecretaddress`, { headers: { authorization: 'Bearer secret-token-value' } })).status).toBe(401);
      expect((await fetch(`${server.url}/api/nothing-here/${account}`)).status).toBe(404);
      await waitFor('a job run', async () => (await jobRuns('chain.deposits:BITCOIN')) > runsBefore, 30_000);
    } finally {
      // The graceful stop flushes what the batch processor holds.
      await server.close();
    }
    // Now, and only now, OpenTelemetry was loaded (the check of the first test sees what it would have).
    expect(loaded.some((url) => url.includes('@opentelemetry/api'))).toBe(true);

    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) {
      expect(body.path).toBe('/v1/traces');
      expect(body.contentType).toBe('application/json');
      expect(body.authorization).toBe('Bearer collector-key');
    }
    const parsed = bodies.map((body) => JSON.parse(body.text) as OtlpBody);
    const services = new Set(parsed.flatMap((b) => b.resourceSpans.map((r) => r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue)));
    expect([...services]).toEqual(['wallet-under-test']);
    const spans = parsed.flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));

    const health = spans.find((s) => s.name === 'GET /api/health');
    expect(health).toBeDefined();
    expect(health?.kind).toBe(2); // SERVER
    expect(attribute(health!, 'http.route')).toBe('/api/health');
    expect(attribute(health!, 'http.request.method')).toBe('GET');
    expect(attribute(health!, 'http.response.status_code')).toBe(200);
    const asset = spans.find((s) => s.name === 'GET /api/:account/asset');
    expect(asset && attribute(asset, 'http.response.status_code')).toBe(401);
    const unmatched = spans.find((s) => s.name === 'GET unmatched');
    expect(unmatched && attribute(unmatched, 'http.response.status_code')).toBe(404);

    // A job run, and the chain node's scan inside it as its child.
    const job = spans.find((s) => s.name === 'job chain.deposits:BITCOIN');
    expect(job && attribute(job, 'wallet.job')).toBe('chain.deposits:BITCOIN');
    const scans = spans.filter((s) => s.name === 'chain scan' && s.parentSpanId === job?.spanId);
    expect(scans.length).toBeGreaterThan(0);
    expect(scans[0]?.kind).toBe(3); // CLIENT
    expect(scans[0]?.traceId).toBe(job?.traceId);
    expect(attribute(scans[0]!, 'wallet.network')).toBe('BITCOIN');

    // No URL, query, header, id, address, token or seed in any span.
    const text = bodies.map((b) => b.text).join('\n');
    for (const secret of [account, 'bc1qsecretaddress', 'secret-token-value', 'Bearer', TEST_MNEMONIC.split(' ')[0] ?? '', server.url, '?address']) expect(text).not.toContain(secret);
    const keys = new Set(spans.flatMap((s) => (s.attributes ?? []).map((a) => a.key)));
    for (const key of keys) expect(['http.request.method', 'http.route', 'http.response.status_code', 'error.type', 'wallet.job', 'wallet.network', 'wallet.chain.operation']).toContain(key);
  });

  it('serves as before when the collector is unreachable, says so once, and stops without waiting on it', async () => {
    const nobody = await freePort();
    // The stop waits for the collector at most SHUTDOWN_TIMEOUT_MS (5 s by default).
    const server = await startInProcess({ ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${nobody}`, SHUTDOWN_TIMEOUT_MS: '300' });
    try {
      for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    } finally {
      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    const warnings = server.logs.filter((line) => line.msg.startsWith('tracing'));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(2);
  });
});
