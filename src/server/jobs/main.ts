/**
 * npm run worker: the background jobs alone, for running them apart from the gateway (the gateway then runs
 * with WORKERS=off, or both run them: jobs are claimed row by row, never twice at once).
 */
import { openTool, openToolCustody } from '../cli/tool.ts';
import { createWorker } from './worker.ts';
import { openTracing } from '../metrics/optional-tracing.ts';
import { productVersion } from '../environment.ts';

// As many connections as the server's pool: a quarter of them run jobs at once (worker.ts), each job's work takes more.
const tool = await openTool({ quiet: false, poolSize: 20, gracefulStop: true });
const { config, log, database } = tool;
// Spans per job run and chain node call when OTEL_EXPORTER_OTLP_ENDPOINT is set (metrics/tracing.ts).
const tracing = await openTracing(config, productVersion, log);
const custody = await openToolCustody(tool, 'worker', tracing?.chainCall);
const worker = createWorker({ pool: database.pool, log, handlers: custody.jobs, pollMs: config.workerPollMs, trace: tracing?.job });
worker.start();
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await worker.stop();
  await custody.close();
  await custody.signer?.close();
  await database.close();
  await tracing?.shutdown();
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop());
