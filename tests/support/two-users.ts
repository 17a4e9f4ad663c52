/** A gateway in this process on its own database, with two signed-in users: the set-up of the cross-account tests. */
import { createTestDatabase, type TestDatabase } from './database.ts';
import { signUpAndSignIn, type SignedInUser } from './auth.ts';
import { TEST_MNEMONIC } from './custody.ts';
import { startInProcess, type InProcessServer } from './in-process.ts';

export const TWO_USERS_PASSWORD = 'a long enough passphrase 42';

export type TwoUsers = { database: TestDatabase; server: InProcessServer; alice: SignedInUser; bob: SignedInUser; close: () => Promise<void> };

/** The embedded analytics data plane is on here, with a known write key and no rate limit, for the attack suite. */
export const ANALYTICS_TEST_WRITE_KEY = 'attack-suite-write-key';
const ANALYTICS_ENV = { ANALYTICS_WRITE_KEY: ANALYTICS_TEST_WRITE_KEY, ANALYTICS_RATE_LIMIT: '0' };

export async function startWithTwoUsers(adminDatabaseUrl: string, prefix: string): Promise<TwoUsers> {
  const database = await createTestDatabase(adminDatabaseUrl);
  const server = await startInProcess({ DATABASE_URL: database.url, WALLET_SEED: TEST_MNEMONIC, RATES_WALK_MS: '0', PUBLIC_RATE_LIMIT: '0', WORKERS: 'off', SELL_ENABLED: 'on', ...ANALYTICS_ENV });
  const user = (name: string) => signUpAndSignIn(server.url, { email: `${prefix}-${name}-${Date.now()}@example.com`, password: TWO_USERS_PASSWORD, databaseUrl: database.url });
  const alice = await user('alice');
  const bob = await user('bob');
  return {
    database,
    server,
    alice,
    bob,
    close: async () => {
      await server.close();
      await database.drop();
    },
  };
}
