import { randomBytes } from 'node:crypto';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_MS = 100;
/** The stream's largest single write: an access-log chunk goes out whole (the stream's default, 16 KB, splits it). */
const LOG_MAX_WRITE = 128 * 1024;

/**
 * Structured JSON logs on stdout; each request's access line (createAccessLog) carries its `reqId`. Written
 * asynchronously and in batches (up to LOG_BATCH_BYTES, at least every LOG_FLUSH_MS): the request path never
 * waits for a write, which cost a third of the throughput of `GET /api/{account}/asset` when each access-log line
 * was a synchronous write (bench:balances). The buffer is flushed synchronously when the process exits, whatever
 * the exit (signal, `process.exit`, a fatal configuration error); only a SIGKILL loses the last LOG_FLUSH_MS.
 * `dest`: the file descriptor (stdout; bench:balances measures the access log alone on a file).
 */
export function createLogger(level: string, dest = 1): Logger {
  const options = loggerOptions(level);
  // A silent logger writes nothing: no stream, no exit hook (tests create many).
  if (level === 'silent') return pino(options);
  return pino(options, pino.destination({ dest, sync: false, minLength: LOG_BATCH_BYTES, maxWrite: LOG_MAX_WRITE, periodicFlush: LOG_FLUSH_MS }));
}

/** The server's log lines as createLogger makes them (its fields, its redaction), whatever stream they go to (the in-process tests keep them). */
export function loggerOptions(level: string) {
  return {
    level,
    base: { service: 'wallet' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['password', '*.password', 'pinCode', '*.pinCode', 'card', '*.card', 'headers.authorization', 'headers.pincode'], censor: '[redacted]' },
  };
}

/**
 * Ids for requests that come without an `x-request-id`: this process's random prefix and a counter (as pino-http
 * numbers requests), unique across processes without a UUID's cost on every request (~3 % of bench:balances).
 */
export function createRequestIds(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let count = 0;
  return () => `${prefix}-${(++count).toString(36)}`;
}

/** What the access log records of a request: no body, header or secret, so its line needs no redaction. */
export type AccessEntry = { reqId: string; method: string; path: string; status: number; ms: number };

/** Lines are handed to the stream in chunks of about this size (one write each), or after ACCESS_FLUSH_MS when fewer come. */
const ACCESS_CHUNK = 64 * 1024;
const ACCESS_FLUSH_MS = LOG_FLUSH_MS;
/** The buffer is handed over once less than this is left (a usual line is ~200 bytes). */
const ACCESS_LINE_ROOM = 1024;

/**
 * The access log: one line per request on the same stream as `log`, in pino's shape (level 30, time, service, msg
 * 'request'), or undefined below info. It is the request path's only logging, so it is cheap: the line is written
 * by hand (`reqId` is createRequestIds' or matched `[\w-]{1,64}`, `method` an HTTP token, the path JSON-escaped), the time
 * string is made once per millisecond, and lines reach the stream in 64 KB chunks (or within LOG_FLUSH_MS), each
 * written at once: the stream re-measures its pending buffer on every write. CPU per line, measured alone: pino's
 * `info` 9.6 µs, a hand-made line written alone 6.2 µs, lines handed over in 16 KB chunks ~1.0 µs, in 64 KB ~0.65 µs.
 * A process that exits writes what it holds.
 */
export function createAccessLog(log: Logger): ((entry: AccessEntry) => void) | undefined {
  if (!log.isLevelEnabled('info')) return undefined;
  const stream = (log as unknown as Record<symbol, (DestinationStream & { flushSync?: () => void }) | undefined>)[pino.symbols.streamSym];
  if (!stream) return undefined;
  // Each line is copied into one buffer as it is made, while its pieces are in the cache: a string grown line by
  // line (or lines joined later) is a chain of pieces scattered in memory that the stream must first flatten, which
  // cost more than making the lines (a profile of bench:balances). A line too long for the room left goes out alone.
  const buffer = Buffer.allocUnsafe(ACCESS_CHUNK);
  let used = 0;
  let timer: NodeJS.Timeout | undefined;
  const hand = () => {
    clearTimeout(timer);
    timer = undefined;
    if (used > 0) stream.write(buffer.toString('utf8', 0, used));
    used = 0;
  };
  process.once('exit', () => {
    if (used === 0) return;
    hand();
    stream.flushSync?.();
  });
  let stampedAt = -1;
  let stamp = '';
  return ({ reqId, method, path, status, ms }) => {
    const now = Date.now();
    if (now !== stampedAt) {
      stampedAt = now;
      stamp = new Date(now).toISOString();
    }
    const line = `{"level":30,"time":"${stamp}","service":"wallet","reqId":"${reqId}","method":"${method}","path":${JSON.stringify(path)},"status":${status},"ms":${ms},"msg":"request"}\n`;
    // At most 3 bytes per UTF-16 unit: a line that may not fit what is left hands the buffer over first.
    if (line.length * 3 > ACCESS_CHUNK - used) {
      hand();
      if (line.length * 3 > ACCESS_CHUNK) return void stream.write(line);
    }
    used += buffer.write(line, used);
    if (used >= ACCESS_CHUNK - ACCESS_LINE_ROOM) hand();
    else timer ??= setTimeout(hand, ACCESS_FLUSH_MS).unref();
  };
}

/**
 * Retries of one stuck money movement (a withdrawal's broadcast, a sale's hand-over to the payout bank) after which
 * each further failure is logged at error level: the user's money is held and the operator should look.
 */
export const ALERT_AFTER_ATTEMPTS = 10;
