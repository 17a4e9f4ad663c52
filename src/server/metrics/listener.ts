/**
 * `GET /metrics` on a listener of its own (METRICS_HOST:METRICS_PORT, loopback by default), never on the public
 * port: the series name networks, jobs and balances an outsider has no business seeing.
 */
import { createServer } from 'node:http';
import type { Registry } from 'prom-client';
import { ConfigError } from '../config-error.ts';
import type { Logger } from '../log.ts';

export type MetricsListener = { port: number; close: () => Promise<void> };

export async function listenMetrics(registry: Registry, options: { host: string; port: number }, log: Logger): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the metrics are at GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body),
      (error: unknown) => {
        log.error({ err: error }, 'metrics could not be rendered');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n');
      },
    );
  });
  // Scrapes are short and few: no connection needs to outlive a shutdown.
  server.keepAliveTimeout = 5_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`METRICS_PORT ${options.port} is already in use`);
    if (code === 'EACCES') throw new ConfigError(`METRICS_PORT ${options.port} needs privileges this process does not have`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`METRICS_HOST ${options.host} is not an address of this machine`);
    throw error;
  }
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : options.port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
