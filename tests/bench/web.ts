import lighthouse from 'lighthouse';
import { launch } from 'chrome-launcher';
import { chromium } from '@playwright/test';
import { initDataFor, newTelegramUser, telegramEnv } from '../support/telegram.ts';
import { createTestDatabase, startTestPostgres } from '../support/database.ts';
import { launchServer } from '../support/server.ts';
import { CHROMIUM_ARGS } from '../e2e/playwright.config.ts';
import { median } from './stats.ts';

/**
 * Lighthouse (mobile preset) on the sign-in shell and the wallet shell, against the real built server; then the
 * mini app as Telegram opens it (launch parameters in the hash, the messenger's bridge stubbed in the page) in
 * Chromium with 4× CPU throttling and Lighthouse's slow-4G profile: from navigation start to the app's `ready()`
 * (its `web_app_ready` event), the median of READY_RUNS cold loads.
 * Targets: /auth/login performance 100, accessibility ≥ 95, best practices 100; /home performance ≥ 98;
 * mini app ready() ≤ 1.0 s.
 */
const READY_RUNS = 5;
/** Lighthouse's mobile slow 4G: 150 ms round trip, 1.6 Mbit/s down, 750 kbit/s up. */
const SLOW_4G = { offline: false, latency: 150, downloadThroughput: (1.6 * 1024 * 1024) / 8, uploadThroughput: (750 * 1024) / 8 };
const PAGES = ['/auth/login', '/home'];
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];

const postgres = await startTestPostgres();
const database = await createTestDatabase(postgres.adminUrl, 'wallet_bench');
const server = await launchServer({ DATABASE_URL: database.url, ...telegramEnv() });
const chrome = await launch({ chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', chromeFlags: ['--headless=new', ...CHROMIUM_ARGS] });
let failed = false;
try {
  for (const path of PAGES) {
    const result = await lighthouse(`${server.url}${path}`, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: CATEGORIES });
    const categories = result?.lhr.categories ?? {};
    const scores = Object.fromEntries(CATEGORIES.map((id) => [id, Math.round((categories[id]?.score ?? 0) * 100)]));
    console.log(`${path.padEnd(14)} ${CATEGORIES.map((id) => `${id} ${scores[id]}`).join('  ')}`);
    if (path === '/auth/login' && ((scores.performance ?? 0) < 100 || (scores.accessibility ?? 0) < 95 || (scores['best-practices'] ?? 0) < 100)) failed = true;
    if (path === '/home' && (scores.performance ?? 0) < 98) failed = true;
    for (const audit of Object.values(result?.lhr.audits ?? {})) {
      if (audit.score !== null && audit.score < 1 && audit.scoreDisplayMode !== 'informative' && audit.scoreDisplayMode !== 'notApplicable' && audit.scoreDisplayMode !== 'manual')
        console.log(`    ${audit.id}: ${audit.title}`);
    }
  }
  const ready = await miniAppReadyMs(server.url);
  const middle = ready.length ? median(ready) : Infinity;
  console.log(`mini app ready()  median ${middle.toFixed(0)} ms of ${ready.map((ms) => ms.toFixed(0)).join(', ')} (4× CPU, slow 4G; goal ≤ 1000 ms)`);
  if (middle > 1000) failed = true;
  console.log(failed ? 'bench:web: FAIL' : 'bench:web: PASS');
} finally {
  chrome.kill();
  await server.stop();
  await database.drop();
  await postgres.stop();
}
process.exit(failed ? 1 : 0);

/** Cold loads of /tg as Telegram opens it, each timed from navigation start to the `web_app_ready` event. */
async function miniAppReadyMs(baseUrl: string): Promise<number[]> {
  const browser = await chromium.launch({ executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const times: number[] = [];
  try {
    for (let run = 0; run < READY_RUNS; run++) {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      const page = await context.newPage();
      await page.addInitScript(() => {
        const w = window as unknown as { __readyAt?: number; TelegramWebviewProxy: unknown };
        w.TelegramWebviewProxy = {
          postEvent(type: string) {
            if (type === 'web_app_ready' && w.__readyAt === undefined) w.__readyAt = performance.now();
          },
        };
      });
      const cdp = await context.newCDPSession(page);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', SLOW_4G);
      const hash = new URLSearchParams({ tgWebAppData: initDataFor(newTelegramUser()), tgWebAppVersion: '8.0', tgWebAppPlatform: 'ios', tgWebAppThemeParams: '{}' });
      await page.goto(`${baseUrl}/tg#${hash.toString()}`);
      await page.waitForFunction(() => (window as unknown as { __readyAt?: number }).__readyAt !== undefined, undefined, { timeout: 30_000 });
      times.push(await page.evaluate(() => (window as unknown as { __readyAt: number }).__readyAt));
      await context.close();
    }
  } finally {
    await browser.close();
  }
  return times;
}
