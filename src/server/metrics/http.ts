/**
 * HTTP requests by method, route pattern and status class: `wallet_http_requests_total` and the latency histogram
 * `wallet_http_request_duration_seconds`. A request only adds to plain numbers kept here (a few map lookups and a
 * bucket search); prom-client sees them when Prometheus scrapes. Observing through prom-client's own children cost
 * ~0.55 µs a request (label validation and hashing on every call), ~2.5 % of a bench:balances request.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { createRouteLabels } from './routes.ts';

/** prom-client's default buckets, in seconds: from a cached balance read to a slow chain call. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

type Label = 'method' | 'route' | 'status';

const HISTOGRAM = 'wallet_http_request_duration_seconds';
const HISTOGRAM_HELP = 'Time from a request arriving to its response ending, by method, route pattern and status class.';

type Tally = { labels: Record<Label, string>; count: number; sum: number; /** per bucket, not cumulative; the last is +Inf's own */ buckets: number[] };

/** One finished request, as the access log has it (log.ts' AccessEntry): `path` without its query. */
export type FinishedRequest = { method: string; path: string; status: number; ms: number };

type Rendered = { labels: Partial<Record<Label | 'le', string | number>>; value: number; metricName: string };

/**
 * prom-client renders a histogram from `getForPromString` (its `get` calls it too); this one renders the tallies kept
 * outside, so the hot path never calls into prom-client.
 */
class TalliedHistogram extends Histogram<Label> {
  tallies: readonly Tally[] = [];

  async getForPromString(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Rendered[] }> {
    const name = HISTOGRAM;
    const values: Rendered[] = [];
    for (const tally of this.tallies) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += tally.buckets[i] ?? 0;
        values.push({ labels: { ...tally.labels, le }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { ...tally.labels, le: '+Inf' }, value: tally.count, metricName: `${name}_bucket` });
      values.push({ labels: tally.labels, value: tally.sum, metricName: `${name}_sum` });
      values.push({ labels: tally.labels, value: tally.count, metricName: `${name}_count` });
    }
    return { name, help: HISTOGRAM_HELP, type: 'histogram', aggregator: 'sum', values };
  }
}

export function createHttpMetrics(registry: Registry, patterns: readonly string[]): { observe: (request: FinishedRequest) => void } {
  const routeOf = createRouteLabels(patterns);
  const tallies: Tally[] = [];
  /** route → method → status class (1–5) → tally: three lookups and no string built per request. */
  const index = new Map<string, Map<string, (Tally | undefined)[]>>();
  const histogram = new TalliedHistogram({ name: HISTOGRAM, help: HISTOGRAM_HELP, labelNames: ['method', 'route', 'status'], buckets: [...BUCKETS], registers: [registry] });
  histogram.tallies = tallies;
  new Counter({
    name: 'wallet_http_requests_total',
    help: 'Requests answered, by method, route pattern (/api/:account/asset; page, /sandbox/*, /oidc/token ... outside /api) and status class (2xx).',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const tally of tallies) this.inc(tally.labels, tally.count);
    },
  });
  const tallyOf = (method: string, route: string, statusClass: number): Tally => {
    let byMethod = index.get(route);
    if (!byMethod) index.set(route, (byMethod = new Map()));
    let byClass = byMethod.get(method);
    if (!byClass) byMethod.set(method, (byClass = []));
    let tally = byClass[statusClass];
    if (!tally) {
      tally = { labels: { method, route, status: `${statusClass}xx` }, count: 0, sum: 0, buckets: new Array<number>(BUCKETS.length + 1).fill(0) };
      byClass[statusClass] = tally;
      tallies.push(tally);
    }
    return tally;
  };
  return {
    observe(request) {
      const seconds = request.ms / 1000;
      const tally = tallyOf(request.method, routeOf(request.path), Math.min(5, Math.max(1, Math.floor(request.status / 100))));
      let bucket = 0;
      while (bucket < BUCKETS.length && seconds > (BUCKETS[bucket] as number)) bucket++;
      tally.buckets[bucket] = (tally.buckets[bucket] ?? 0) + 1;
      tally.count++;
      tally.sum += seconds;
    },
  };
}
