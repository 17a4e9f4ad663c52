import { test as base } from '@playwright/test';
import { createTestDatabase } from '../support/database.ts';
import { launchServer, type LaunchedServer } from '../support/server.ts';

export { expect } from '@playwright/test';

type WorkerFixtures = { app: LaunchedServer; appEnv: Record<string, string> };

/** The real server, started per worker on a fresh database; tests reach it through `baseURL`. */
export const test = base.extend<object, WorkerFixtures>({
  appEnv: [{}, { scope: 'worker', option: true }],
  app: [
    async ({ appEnv }, use) => {
      const admin = process.env.E2E_ADMIN_DATABASE_URL;
      if (!admin) throw new Error('E2E_ADMIN_DATABASE_URL is not set: run through the Playwright config');
      const database = await createTestDatabase(admin, 'wallet_e2e');
      const port = await import('../support/server.ts').then((m) => m.freePort());
      const server = await launchServer({ DATABASE_URL: database.url, PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(port), ...appEnv });
      await use(server);
      await server.stop();
      await database.drop();
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  baseURL: async ({ app }, use) => use(app.url),
});
