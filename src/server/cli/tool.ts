/**
 * What the command-line tools and the worker share: the server's configuration, read as the server reads it
 * (environment.ts: the environment over ENV_FILE), its database and, for the commands that need it, the custody
 * composed as the server composes it. A start the server would refuse is refused here with the server's words, in
 * one line. With the embedded PostgreSQL they reuse the server already running on DATA_DIR (found by its
 * postmaster.pid), or start it.
 */
import type { Config } from '../config.ts';
import { createLogger, type Logger } from '../log.ts';
import { openDatabase, type Database } from '../db/database.ts';
import { openCustody, type Custody } from '../custody.ts';
import { embeddedSigner, type RunningSigner } from '../signer/service.ts';
import type { ChainCallTrace } from '../adapters/chains/port.ts';
import { checkServerSettings, loadEnvironmentConfig, recordServerSettings, startFailure } from '../environment.ts';

export type Tool = { config: Config; log: Logger; database: Database };

type ToolOptions = {
  /** Logs at LOG_LEVEL (the worker); otherwise a tool's logs stay quiet unless LOG_LEVEL asks for them. */
  quiet?: boolean;
  /** The database connections the tool may hold (4; the worker, whose jobs run side by side, takes more). */
  poolSize?: number;
  /** It stops itself on SIGINT/SIGTERM (the worker, the signer): an embedded PostgreSQL it starts runs in a process group of its own (see embedded.ts). */
  gracefulStop?: boolean;
};

export async function openTool(options: ToolOptions = {}): Promise<Tool> {
  let config: Config;
  try {
    config = loadEnvironmentConfig();
  } catch (error) {
    toolFail(startFailure(error));
  }
  // A tool talks to its user on the terminal; its logs stay quiet unless LOG_LEVEL asks for them.
  const log = createLogger(process.env.LOG_LEVEL || options.quiet === false ? config.logLevel : 'warn');
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: options.poolSize ?? 4, gracefulStop: options.gracefulStop ?? false }, log).catch((error: unknown) => toolFail(startFailure(error)));
  return { config, log, database };
}

/**
 * The custody as the server composes it. `role: 'command'` (a report or a movement beside the server) refuses to run
 * under other settings than the server's; `role: 'worker'` is part of the server and records its settings.
 */
export async function openToolCustody(tool: Tool, role: 'command' | 'worker', traceChain?: ChainCallTrace): Promise<Custody & { signer?: RunningSigner | undefined }> {
  try {
    if (role === 'command') await checkServerSettings(tool.database.pool, tool.config);
    // The worker holds no key (it asks the signer, started here under SIGNER=embedded when none runs); a command
    // (npm run custody, beside the signer) loads the seed itself.
    const signer = role === 'worker' ? await embeddedSigner(tool.config, tool.log, tool.database.pool) : undefined;
    const custody = await openCustody(tool.config, tool.log, tool.database.pool, { owner: role === 'worker', traceChain, signing: role === 'worker' ? 'signer' : 'seed' });
    if (role === 'worker') await recordServerSettings(tool.database.pool, tool.config);
    return { ...custody, signer };
  } catch (error) {
    await tool.database.close();
    toolFail(startFailure(error));
  }
}

export function toolFail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
