import { test as base, expect } from '@playwright/test';
import { createTestDatabase } from '../support/database.ts';
import { launchServer, type LaunchedServer } from '../support/server.ts';

export { expect } from '@playwright/test';

/** The server, and the environment it runs with: the command-line tools need the same one to work beside it. */
export type TestApp = LaunchedServer & { env: Record<string, string> };
type WorkerFixtures = { app: TestApp; appEnv: Record<string, string> };
type TestFixtures = { cspViolations: string[] };

/** The real server, started per worker on a fresh database; tests reach it through `baseURL`. */
export const test = base.extend<TestFixtures, WorkerFixtures>({
  // Every test fails on a Content-Security-Policy violation: a blocked inline script breaks a page silently.
  cspViolations: [
    async ({ context }, use) => {
      const violations: string[] = [];
      context.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(`${message.location().url}: ${message.text()}`);
      });
      await context.addInitScript(() =>
        document.addEventListener('securitypolicyviolation', (event) =>
          console.error(`Content Security Policy violation: ${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}`),
        ),
      );
      await use(violations);
      expect(violations, 'no Content Security Policy violation').toEqual([]);
    },
    { auto: true },
  ],
  appEnv: [{}, { scope: 'worker', option: true }],
  app: [
    async ({ appEnv }, use) => {
      const admin = process.env.E2E_ADMIN_DATABASE_URL;
      if (!admin) throw new Error('E2E_ADMIN_DATABASE_URL is not set: run through the Playwright config');
      const database = await createTestDatabase(admin, 'wallet_e2e');
      const port = await import('../support/server.ts').then((m) => m.freePort());
      // Every browser of every spec comes from 127.0.0.1: the per-client limits on sign-up and reset would count them as one.
      const env = { DATABASE_URL: database.url, PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(port), AUTH_RATE_LIMIT: '10000', ...appEnv };
      const server = await launchServer(env);
      await use(Object.assign(server, { env }));
      await server.stop();
      await database.drop();
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  baseURL: async ({ app }, use) => use(app.url),
});
