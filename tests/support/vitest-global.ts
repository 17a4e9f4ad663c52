import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './database.ts';

/** One PostgreSQL server for the integration run; suites create their own databases on it. */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  project.provide('adminDatabaseUrl', server.adminUrl);
  return server.stop;
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}
