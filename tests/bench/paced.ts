import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { percentile } from './stats.ts';

const HEADER_END = Buffer.from('\r\n\r\n');

/** One kept-alive connection: a request at a time, its answer read to the end of its Content-Length. */
type Connection = { socket: Socket; busy: boolean; sentAt: number; received: Buffer[]; bytes: number; expected: number; status: number };

/**
 * GETs `url` at `rate` requests a second for `seconds`, evenly spaced (due every 1/rate s, sent on the next
 * millisecond's timer), over at most `connections` kept-alive sockets, as users' polls arrive: not as autocannon's
 * rate, which lets each connection send its whole second's share at once at the top of every second, so its
 * "paced" latencies are those of a server flat out. Each latency runs from the request's send, so one that waited
 * for a free socket counts its wait, and this process's timer (up to a millisecond late) does not count.
 *
 * Raw sockets and one request written ahead of time, as autocannon does: node:http's client spent 100–240 µs of CPU
 * per request here (more than the server it measured), so at half the server's flat-out rate the two together
 * overloaded a 2-core machine and the latencies were the generator's.
 */
export async function pacedLoad(url: string, headers: Record<string, string>, rate: number, seconds: number, connections = 50): Promise<{ rps: number; p50: number; p99: number }> {
  const target = new URL(url);
  const request = Buffer.from(
    [`GET ${target.pathname}${target.search} HTTP/1.1`, `Host: ${target.host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), 'Connection: keep-alive', '', ''].join('\r\n'),
  );
  const latencies: number[] = [];
  const failures: string[] = [];
  const idle: Connection[] = [];
  /** Requests due while every connection was busy, by the time they were due: sent as one frees up, their wait counted. */
  const waiting: number[] = [];
  let inFlight = 0;
  let settled: () => void = () => {};

  const send = (connection: Connection, sentAt: number) => {
    connection.busy = true;
    connection.sentAt = sentAt;
    connection.received = [];
    connection.bytes = 0;
    connection.expected = -1;
    inFlight += 1;
    connection.socket.write(request);
  };
  const finish = (connection: Connection) => {
    connection.busy = false;
    inFlight -= 1;
    if (connection.status === 200) latencies.push(performance.now() - connection.sentAt);
    else failures.push(`HTTP ${connection.status}`);
    const next = waiting.shift();
    if (next === undefined) idle.push(connection);
    else send(connection, next);
    if (inFlight === 0) settled();
  };
  const open = () =>
    new Promise<Connection>((resolve, reject) => {
      const socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
      const connection: Connection = { socket, busy: false, sentAt: 0, received: [], bytes: 0, expected: -1, status: 0 };
      socket.once('connect', () => resolve(connection));
      socket.on('error', (error) => (connection.busy ? failures.push(error.message) : reject(error)));
      socket.on('data', (chunk: Buffer) => {
        connection.received.push(chunk);
        connection.bytes += chunk.length;
        if (connection.expected < 0) {
          const head = connection.received.length === 1 ? chunk : Buffer.concat(connection.received);
          const end = head.indexOf(HEADER_END);
          if (end < 0) return;
          const lines = head.subarray(0, end).toString('latin1').split('\r\n');
          connection.status = Number(lines[0]?.split(' ')[1]);
          const length = lines.find((line) => /^content-length:/i.test(line));
          if (!length) {
            failures.push('an answer without Content-Length');
            socket.destroy();
            return;
          }
          connection.expected = end + HEADER_END.length + Number(length.slice(length.indexOf(':') + 1));
        }
        if (connection.bytes >= connection.expected) finish(connection);
      });
      // A connection the server closed while it was idle (its keep-alive timeout) is not used again.
      socket.on('close', () => {
        const at = idle.indexOf(connection);
        if (at >= 0) idle.splice(at, 1);
        if (!connection.busy) return;
        connection.busy = false;
        failures.push('a connection closed mid-answer');
        inFlight -= 1;
        if (inFlight === 0) settled();
      });
    });
  const pool = await Promise.all(Array.from({ length: connections }, open));
  idle.push(...pool);

  const total = Math.round(rate * seconds);
  let sent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) / 1000) * rate) + 1);
      for (; sent < due; sent += 1) {
        // The longest idle first: every connection takes its turn, so none sits out the server's keep-alive timeout.
        const connection = idle.shift();
        if (connection) send(connection, performance.now());
        else waiting.push(now);
      }
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  if (inFlight > 0 || waiting.length > 0) await new Promise<void>((resolve) => (settled = resolve));
  const elapsed = (performance.now() - start) / 1000;
  for (const connection of pool) connection.socket.destroy();
  if (failures.length > 0) throw new Error(`${url}: ${failures.length} of ${total} failed (${failures[0]})`);
  latencies.sort((a, b) => a - b);
  return { rps: total / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
