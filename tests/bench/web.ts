import lighthouse from 'lighthouse';
import { launch } from 'chrome-launcher';
import { createTestDatabase, startTestPostgres } from '../support/database.ts';
import { launchServer } from '../support/server.ts';
import { CHROMIUM_ARGS } from '../e2e/playwright.config.ts';

/**
 * Lighthouse (mobile preset) on the sign-in shell and the wallet shell, against the real built server.
 * Targets for /auth/login: performance 100, accessibility ≥ 95, best practices 100.
 */
const PAGES = ['/auth/login', '/home'];
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];

const postgres = await startTestPostgres();
const database = await createTestDatabase(postgres.adminUrl, 'wallet_bench');
const server = await launchServer({ DATABASE_URL: database.url });
const chrome = await launch({ chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', chromeFlags: ['--headless=new', ...CHROMIUM_ARGS] });
let failed = false;
try {
  for (const path of PAGES) {
    const result = await lighthouse(`${server.url}${path}`, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: CATEGORIES });
    const categories = result?.lhr.categories ?? {};
    const scores = Object.fromEntries(CATEGORIES.map((id) => [id, Math.round((categories[id]?.score ?? 0) * 100)]));
    console.log(`${path.padEnd(14)} ${CATEGORIES.map((id) => `${id} ${scores[id]}`).join('  ')}`);
    if (path === '/auth/login' && ((scores.performance ?? 0) < 100 || (scores.accessibility ?? 0) < 95 || (scores['best-practices'] ?? 0) < 100)) failed = true;
    for (const audit of Object.values(result?.lhr.audits ?? {})) {
      if (audit.score !== null && audit.score < 1 && audit.scoreDisplayMode !== 'informative' && audit.scoreDisplayMode !== 'notApplicable' && audit.scoreDisplayMode !== 'manual')
        console.log(`    ${audit.id}: ${audit.title}`);
    }
  }
} finally {
  chrome.kill();
  await server.stop();
  await database.drop();
  await postgres.stop();
}
if (failed) {
  console.error('bench:web: /auth/login is below its targets (performance 100, accessibility 95, best practices 100)');
  process.exit(1);
}
