import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Builds the pages before `npm start` when dist is missing or older than the sources that make it. */
const root = new URL('../../../', import.meta.url).pathname;
const entry = join(root, 'dist/server/entry.mjs');
const sources = ['src/pages', 'src/layouts', 'src/wallet', 'src/stores', 'src/platform', 'src/api', 'src/lib', 'i18n', 'public', 'astro.config.mjs', 'uno.config.ts', 'package-lock.json'];

function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
}

const built = existsSync(entry) ? statSync(entry).mtimeMs : 0;
const changed = Math.max(...sources.map((source) => newest(join(root, source))));
if (built < changed) {
  console.error(built ? 'wallet: sources changed since the last build, building the pages…' : 'wallet: building the pages (first start)…');
  execFileSync('npx', ['astro', 'build', '--silent'], { cwd: root, stdio: 'inherit', env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1' } });
}
