import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createAccessLog } from '../../../src/server/log.ts';

/** A logger whose stream records each write, as the real destination receives them. */
function recordingLogger(level: string) {
  const writes: string[] = [];
  const log = pino({ level, base: { service: 'wallet' } }, { write: (chunk: string) => void writes.push(chunk) });
  return { log, writes };
}

const flushed = () => new Promise((resolve) => setTimeout(resolve, 150));

describe('the access log', () => {
  it("writes one JSON line per request in pino's shape, the path escaped whatever it holds", async () => {
    const { log, writes } = recordingLogger('info');
    const access = createAccessLog(log);
    const path = '/api/"quoted"\\back\nline\u0001';
    access?.({ reqId: 'abc-1', method: 'GET', path, status: 200, ms: 1.5 });
    access?.({ reqId: 'abc-2', method: 'POST', path: '/api/user', status: 401, ms: 0 });
    await flushed();
    const lines = writes.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      { level: 30, time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), service: 'wallet', reqId: 'abc-1', method: 'GET', path, status: 200, ms: 1.5, msg: 'request' },
      { level: 30, time: expect.any(String), service: 'wallet', reqId: 'abc-2', method: 'POST', path: '/api/user', status: 401, ms: 0, msg: 'request' },
    ]);
  });

  it('hands lines to the stream in chunks of about 64 KB, and what is left within the flush interval', async () => {
    const { log, writes } = recordingLogger('info');
    const access = createAccessLog(log);
    const path = `/api/${'x'.repeat(100)}`;
    for (let i = 0; i < 600; i++) access?.({ reqId: `r${i}`, method: 'GET', path, status: 200, ms: 1 });
    // 600 lines of about 230 bytes: two full chunks at once, the rest held for a moment.
    expect(writes.length).toBe(2);
    for (const chunk of writes) expect(Buffer.byteLength(chunk)).toBeGreaterThanOrEqual(63 * 1024);
    await flushed();
    expect(writes.length).toBe(3);
    const lines = writes.join('').split('\n').filter(Boolean);
    expect(lines.map((line) => (JSON.parse(line) as { reqId: string }).reqId)).toEqual(Array.from({ length: 600 }, (_, i) => `r${i}`));
  });

  it('keeps every character of a path, and a line longer than a chunk whole and in its place', async () => {
    const { log, writes } = recordingLogger('info');
    const access = createAccessLog(log);
    const paths = ['/api/é/ü', `/api/${'ж'.repeat(300)}`, `/api/${'💸'.repeat(12_000)}`, '/api/\ud800-lone', '/api/last'];
    for (const [i, path] of paths.entries()) access?.({ reqId: `r${i}`, method: 'GET', path, status: 200, ms: 1 });
    await flushed();
    const lines = writes.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { reqId: string; path: string });
    expect(lines.map(({ reqId, path }) => [reqId, path])).toEqual(paths.map((path, i) => [`r${i}`, path]));
  });

  it('is off below info: a request then costs no logging at all', () => {
    expect(createAccessLog(recordingLogger('warn').log)).toBeUndefined();
    expect(createAccessLog(pino({ level: 'silent' }))).toBeUndefined();
  });
});
