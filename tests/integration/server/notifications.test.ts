import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { mnemonicToSeedSync } from '@scure/bip39';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { auditFailures, createWalletAccount, openTestCustody, quietLog, waitFor } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import type { TestCustody } from '../../support/custody.ts';
import { deriveAddress } from '../../../src/server/domain/addresses.ts';
import { addAssets, listAssets } from '../../../src/server/domain/assets.ts';
import { confirmDeposits, scanDeposits } from '../../../src/server/domain/deposits.ts';
import { createWithdrawalService, type WithdrawalService } from '../../../src/server/domain/withdrawals/requests.ts';
import { broadcastWithdrawals, confirmWithdrawals, signWithdrawals } from '../../../src/server/domain/withdrawals/worker.ts';
import { deliverNotifications, MAX_ATTEMPTS } from '../../../src/server/domain/notifications.ts';
import { createNoticeSender } from '../../../src/server/adapters/telegram/notices.ts';

/**
 * The bot's messages about money (issue 36 item 2) against real PostgreSQL, ledger and devnet, sent by the real
 * sender to a local stand-in of the Bot API that answers `sendMessage` as Telegram documents it (and fails on demand).
 */
const OUTSIDE_SEED = mnemonicToSeedSync('letter advice cage absurd amount doctor acoustic avoid letter advice cage above');
const outside = (index: number) => deriveAddress(OUTSIDE_SEED, 'BITCOIN', index, 'mainnet');
const TOKEN = '7000000001:AAE-notifications-test-token-0123456789';

type Sent = { chat_id: number; text: string; reply_markup?: unknown };

/** Telegram's Bot API as far as sendMessage goes; `failures` answers the next calls with these statuses instead. */
function botApiStandIn() {
  const sent: Sent[] = [];
  const failures: number[] = [];
  let delayMs = 0;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      void (async () => {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        const failure = failures.shift();
        response.setHeader('content-type', 'application/json');
        if (request.url !== `/bot${TOKEN}/sendMessage`) {
          response.statusCode = 404;
          return response.end(JSON.stringify({ ok: false, error_code: 404, description: 'Not Found' }));
        }
        if (failure !== undefined) {
          response.statusCode = failure;
          return response.end(JSON.stringify({ ok: false, error_code: failure, description: failure === 403 ? 'Forbidden: bot was blocked by the user' : 'Bad Gateway' }));
        }
        const payload = JSON.parse(body) as Sent;
        sent.push(payload);
        response.end(JSON.stringify({ ok: true, result: { message_id: sent.length, date: Math.floor(Date.now() / 1000), chat: { id: payload.chat_id, type: 'private' }, text: payload.text } }));
      })();
    });
  });
  return {
    sent,
    failures,
    setDelay: (ms: number) => void (delayMs = ms),
    start: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Telegram notifications of deposits and withdrawals', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let custody: TestCustody;
  let service: WithdrawalService;
  const api = botApiStandIn();
  let deliver: (pool?: pg.Pool) => Promise<number>;
  let nextChat = 900_000_000;

  beforeAll(async () => {
    testDatabase = await createTestDatabase(inject('adminDatabaseUrl'));
    ({ database, custody } = await openTestCustody(testDatabase.url));
    service = createWithdrawalService({ pool: database.pool, chain: custody.chain, rates: custody.rates, addresses: custody.addresses, catalogue: custody.catalogue, settings: { fees: { BTC: '0.0001' }, blockedAddresses: [], feeMarginBps: 2000 } });
    const apiRoot = await api.start();
    const sender = createNoticeSender({ apiRoot, botToken: TOKEN, miniAppUrl: 'https://wallet.test/tg' });
    deliver = (pool = database.pool) => deliverNotifications(pool, sender, { log: quietLog, baseDelayMs: 50 });
  });
  afterAll(async () => {
    if (database) expect(await auditFailures(database.pool)).toEqual([]);
    await api.stop();
    await database?.close();
    await testDatabase?.drop();
  });
  beforeEach(() => {
    api.failures.length = 0;
    api.setDelay(0);
  });

  /** A user with a BTC address, their Telegram linked (or not) and their language. */
  const user = async (options: { language?: 'ENG' | 'RUS'; linked?: boolean } = {}) => {
    const { userId, accountId } = await createWalletAccount(database.pool);
    await database.pool.query('UPDATE users SET language = $2 WHERE id = $1', [userId, options.language ?? 'ENG']);
    const chatId = ++nextChat;
    if (options.linked ?? true) await database.pool.query(`INSERT INTO telegram_accounts (telegram_id, user_id, first_name) VALUES ($1, $2, 'Test')`, [chatId, userId]);
    await addAssets(database.pool, accountId, ['BTC'], custody.catalogue, custody);
    const address = (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'BTC')?.depositAddress ?? '';
    return { userId, accountId, chatId, address };
  };
  const textsTo = (chatId: number) => api.sent.filter((m) => m.chat_id === chatId).map((m) => m.text);
  const rowsOf = async (userId: string) =>
    (await database.pool.query<{ event: string; outcome: string | null; attempts: number }>('SELECT event, outcome, attempts FROM telegram_notifications WHERE user_id = $1 ORDER BY created_at', [userId])).rows;
  const credit = (accountId: string, amount: string) =>
    waitFor(`${amount} BTC credited`, async () => {
      await scanDeposits(database.pool, custody.chain, 'BITCOIN');
      await confirmDeposits(database.pool, custody.chain, quietLog);
      return (await listAssets(database.pool, accountId, custody.catalogue, custody.addressGuard)).find((a) => a.currency === 'BTC')?.totalAvailable === amount;
    });
  const withdrawOnce = async (accountId: string, to: string) => {
    const created = await service.create(accountId, { currency: 'BTC', amount: '0.01', depositAddress: to, idempotencyKey: randomUUID() });
    await signWithdrawals(database.pool, custody.chain, quietLog);
    await broadcastWithdrawals(database.pool, custody.chain, quietLog);
    return created;
  };

  it('tells a Russian-speaking user of a deposit pending and credited, then of a withdrawal sent and completed, each once', async () => {
    const russian = await user({ language: 'RUS' });
    await custody.chain.send({ currency: 'BTC', toAddress: russian.address, amount: '0.05' });
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    await deliver();
    expect(textsTo(russian.chatId)).toEqual(['Входящий перевод: 0.05 BTC. Ожидает подтверждения в сети.']);
    // The message carries the bot's 'open wallet' button, in the user's language.
    expect(api.sent.find((m) => m.chat_id === russian.chatId)?.reply_markup).toEqual({ inline_keyboard: [[{ text: 'Открыть кошелёк', web_app: { url: 'https://wallet.test/tg' } }]] });

    await credit(russian.accountId, '0.05');
    await deliver();
    await deliver();
    expect(textsTo(russian.chatId)).toEqual(['Входящий перевод: 0.05 BTC. Ожидает подтверждения в сети.', 'Зачислено: 0.05 BTC на вашем кошельке.']);

    await withdrawOnce(russian.accountId, await outside(1));
    await deliver();
    expect(textsTo(russian.chatId).at(-1)).toBe('Вывод отправлен: 0.01 BTC в пути.');
    await waitFor('withdrawal completed', async () => {
      await confirmWithdrawals(database.pool, custody.chain, quietLog);
      await deliver();
      return textsTo(russian.chatId).length === 4;
    });
    expect(textsTo(russian.chatId).at(-1)).toBe('Вывод завершён: 0.01 BTC доставлено.');
    expect((await rowsOf(russian.userId)).map((r) => [r.event, r.outcome])).toEqual([
      ['deposit.pending', 'sent'],
      ['deposit.credited', 'sent'],
      ['withdrawal.sent', 'sent'],
      ['withdrawal.completed', 'sent'],
    ]);
    // Nothing more to say, however often the job runs.
    expect(await deliver()).toBe(0);
    expect(textsTo(russian.chatId)).toHaveLength(4);
  });

  it('tells an English-speaking user of a failed withdrawal', async () => {
    const english = await user({ language: 'ENG' });
    await custody.chain.send({ currency: 'BTC', toAddress: english.address, amount: '0.03' });
    await credit(english.accountId, '0.03');
    const to = await outside(2);
    await custody.chain.failNext({ currency: 'BTC', address: to, mode: 'REJECT' });
    const { id } = await withdrawOnce(english.accountId, to);
    expect((await database.pool.query<{ state: string }>('SELECT state FROM withdrawals WHERE id = $1', [id])).rows[0]?.state).toBe('FAILED');
    await deliver();
    expect(textsTo(english.chatId)).toEqual([
      'Incoming deposit: 0.03 BTC. It is pending confirmation on the network.',
      'Deposit credited: 0.03 BTC is in your wallet.',
      'Withdrawal failed: 0.01 BTC was not sent. Open the wallet for details.',
    ]);
  });

  it('queues nothing for a user without a linked Telegram or with the switch off, and skips a message switched off before it went', async () => {
    const unlinked = await user({ linked: false });
    const off = await user();
    await database.pool.query('UPDATE users SET telegram_notifications = false WHERE id = $1', [off.userId]);
    const later = await user();
    for (const who of [unlinked, off, later]) await custody.chain.send({ currency: 'BTC', toAddress: who.address, amount: '0.02' });
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    expect(await rowsOf(unlinked.userId)).toEqual([]);
    expect(await rowsOf(off.userId)).toEqual([]);
    expect(await rowsOf(later.userId)).toHaveLength(1);
    // Switched off after the deposit was seen, before the job ran: the message is not sent.
    await database.pool.query('UPDATE users SET telegram_notifications = false WHERE id = $1', [later.userId]);
    await deliver();
    expect(textsTo(later.chatId)).toEqual([]);
    expect((await rowsOf(later.userId))[0]?.outcome).toBe('skipped');
    expect(textsTo(unlinked.chatId)).toEqual([]);
    expect(textsTo(off.chatId)).toEqual([]);
  });

  it('retries a message Telegram did not take, sends it once, and gives up on a user who blocked the bot', async () => {
    const retried = await user();
    await custody.chain.send({ currency: 'BTC', toAddress: retried.address, amount: '0.04' });
    api.failures.push(502, 502);
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    expect(await deliver()).toBe(0);
    expect(textsTo(retried.chatId)).toEqual([]);
    await waitFor('the retried message sent', async () => {
      await deliver();
      return textsTo(retried.chatId).length > 0;
    });
    expect(await deliver()).toBe(0);
    expect(textsTo(retried.chatId)).toEqual(['Incoming deposit: 0.04 BTC. It is pending confirmation on the network.']);
    expect((await rowsOf(retried.userId))[0]).toMatchObject({ outcome: 'sent', attempts: 3 });

    const blocked = await user();
    await custody.chain.send({ currency: 'BTC', toAddress: blocked.address, amount: '0.04' });
    api.failures.push(403);
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    await deliver();
    expect((await rowsOf(blocked.userId))[0]).toMatchObject({ outcome: 'failed', attempts: 1 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await deliver();
    expect(textsTo(blocked.chatId)).toEqual([]);
    expect(MAX_ATTEMPTS).toBeGreaterThan(3);
  });

  it('sends each message once when two workers race for the same rows', async () => {
    const users = await Promise.all([user(), user(), user()]);
    for (const who of users) await custody.chain.send({ currency: 'BTC', toAddress: who.address, amount: '0.01' });
    await scanDeposits(database.pool, custody.chain, 'BITCOIN');
    // Slow answers keep the first worker's rows in flight while the others look.
    api.setDelay(150);
    const other = new pg.Pool({ connectionString: testDatabase.url, max: 3 });
    try {
      const delivered = await Promise.all([deliver(), deliver(other), deliver(), deliver(other)]);
      expect(delivered.reduce((a, b) => a + b, 0)).toBe(3);
    } finally {
      await other.end();
    }
    for (const who of users) expect(textsTo(who.chatId)).toEqual(['Incoming deposit: 0.01 BTC. It is pending confirmation on the network.']);
  });
});
