/**
 * What the command-line tools share: the same environment as `npm start`, and its database. With the embedded
 * PostgreSQL they reuse the server already running on DATA_DIR (found by its postmaster.pid), or start it.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { createLogger, type Logger } from '../log.ts';
import { openDatabase, type Database } from '../db/database.ts';

export type Tool = { config: Config; log: Logger; database: Database };

/** `poolSize`: the database connections the tool may hold (4; the worker, whose jobs run side by side, takes more). */
export async function openTool(options: { quiet?: boolean; poolSize?: number } = {}): Promise<Tool> {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  let config: Config;
  try {
    config = loadConfig(process.env, version);
  } catch (error) {
    if (error instanceof ConfigError) toolFail(error.message);
    throw error;
  }
  // A tool talks to its user on the terminal; its logs stay quiet unless LOG_LEVEL asks for them.
  const log = createLogger(process.env.LOG_LEVEL || options.quiet === false ? config.logLevel : 'warn');
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: options.poolSize ?? 4 }, log);
  return { config, log, database };
}

export function toolFail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
