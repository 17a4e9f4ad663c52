import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestPostgres } from '../support/database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Builds the pages once if needed and provides one PostgreSQL server; each worker makes its own database. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(`${ROOT}dist/server/entry.mjs`)) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const server = await startTestPostgres();
  process.env.E2E_ADMIN_DATABASE_URL = server.adminUrl;
  return server.stop;
}
