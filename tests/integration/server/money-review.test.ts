import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { startInProcess, testServerEnv, type InProcessServer } from '../../support/in-process.ts';
import { signUpAndSignIn, type SignedInUser } from '../../support/auth.ts';
import { gatewayClient } from '../../support/http.ts';
import { TEST_MNEMONIC } from '../../support/custody.ts';

/**
 * Review findings on the money paths, through the real server and PostgreSQL: a client's mistake is a 4xx, never a
 * 500, and an amount is never silently changed on its way in.
 */
const PASSWORD = 'a long enough passphrase 42';

describe('money paths: inputs', () => {
  let database: TestDatabase;
  let server: InProcessServer;
  let alice: SignedInUser;

  const call = gatewayClient(() => server.url, { headers: { 'content-type': 'application/json' } });

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    server = await startInProcess({ ...testServerEnv(database.url), WALLET_SEED: TEST_MNEMONIC, WORKER_POLL_MS: '100', RATES_WALK_MS: '0', WITHDRAWAL_FEES: JSON.stringify({ BTC: '0.0001' }) });
    alice = await signUpAndSignIn(server.url, { email: `review-alice-${Date.now()}@example.com`, password: PASSWORD, databaseUrl: database.url });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('answers a JSON body that is not an object on the buy routes with 400, not 500', async () => {
    const paths = ['/api/b2c/fiat/method', '/api/b2c/order', `/api/fiatDeposit/methods?account=${alice.accountId}`, `/api/fiatDeposit/order?account=${alice.accountId}`];
    for (const path of paths) {
      for (const body of ['null', '[]', '"text"', '7']) {
        expect(await call(undefined, 'POST', path, body), `${path} ${body}`).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
      }
    }
    for (const path of ['/api/b2c/order/confirm', `/api/fiatDeposit/order/confirm?account=${alice.accountId}`]) {
      expect(await call(alice, 'POST', path, 'null'), path).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    }
  });

  it('refuses an amount sent as a JSON number that a double cannot hold exactly, instead of moving another amount', async () => {
    const fee = (amount: string) => call(alice, 'POST', `/api/${alice.accountId}/withdrawal/preliminary/fee`, `{"currency":"BTC","amount":${amount}}`);
    // 90005022.93936635 parses to the double printed as 90005022.93936636: the server would quote (and send) that.
    expect(await fee('90005022.93936635')).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect(await fee('12345678.12345678')).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    // Numbers a double holds exactly still work as before; the same amount as a string is always exact.
    expect(await fee('100')).toMatchObject({ status: 200, body: { amount: '100' } });
    expect(await fee('0.015')).toMatchObject({ status: 200, body: { amount: '0.015' } });
    expect(await fee('"90005022.93936635"')).toMatchObject({ status: 200, body: { amount: '90005022.93936635' } });

    const send = await call(alice, 'POST', `/api/${alice.accountId}/withdrawal`, `{"currency":"BTC","amount":90005022.93936635,"depositAddress":"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh","idempotencyKey":"${randomUUID()}"}`);
    expect(send).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });

    const methods = await call(undefined, 'POST', '/api/b2c/fiat/method', JSON.stringify({ account: alice.accountId, currency: 'BTC', fiatCurrency: 'USD' }).replace('}', ',"cryptoAmount":123456789.12345678}'));
    expect(methods).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
  });
});
