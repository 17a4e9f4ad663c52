import { Agent, get } from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentile } from './stats.ts';

/**
 * GETs `url` at `rate` requests a second for `seconds`, evenly spaced (due every 1/rate s, sent on the next
 * millisecond's timer), over at most `connections` kept-alive sockets, as users' polls arrive: not as autocannon's
 * rate, which lets each connection send its whole second's share at once at the top of every second, so its
 * "paced" latencies are those of a server flat out. Each latency runs from the request's send, so one that waited
 * for a free socket counts its wait, and this process's timer (up to a millisecond late) does not count.
 */
export async function pacedLoad(url: string, headers: Record<string, string>, rate: number, seconds: number, connections = 50): Promise<{ rps: number; p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  const failures: string[] = [];
  const one = () =>
    new Promise<void>((resolve) => {
      const sentAt = performance.now();
      const request = get(url, { agent, headers }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode === 200) latencies.push(performance.now() - sentAt);
          else failures.push(`HTTP ${response.statusCode}`);
          resolve();
        });
      });
      request.on('error', (error) => {
        failures.push(error.message);
        resolve();
      });
    });
  const total = Math.round(rate * seconds);
  const requests: Promise<void>[] = [];
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
      while (requests.length < due) requests.push(one());
      if (requests.length < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await Promise.all(requests);
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  if (failures.length > 0) throw new Error(`${url}: ${failures.length} of ${total} failed (${failures[0]})`);
  latencies.sort((a, b) => a - b);
  return { rps: total / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
