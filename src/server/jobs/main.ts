/**
 * npm run worker: the background jobs alone, for running them apart from the gateway (the gateway then runs
 * with WORKERS=off, or both run them: jobs are claimed row by row, never twice at once).
 */
import { openTool, openToolCustody } from '../cli/tool.ts';
import { createWorker } from './worker.ts';

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeAllListeners(signal);
// As many connections as the server's pool: each job running holds one for its claim (worker.ts), half of them run at once.
const tool = await openTool({ quiet: false, poolSize: 20 });
const { config, log, database } = tool;
const custody = await openToolCustody(tool, 'worker');
const worker = createWorker({ pool: database.pool, log, handlers: custody.jobs, pollMs: config.workerPollMs });
worker.start();
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await worker.stop();
  await custody.close();
  await database.close();
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop());
