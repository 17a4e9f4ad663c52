import { ed25519PublicKey, signInitData, type TelegramUser } from '../../src/server/domain/telegram-init-data.ts';

/**
 * A Telegram that tests control: a bot token and an Ed25519 key of their own (the server is told to trust its
 * public half instead of Telegram's), the Bot API answered by the server's own stand-in, a known webhook secret.
 */
export const TEST_BOT_TOKEN = '7123456789:AAE-wallet-test-bot-token-0123456789';
export const TEST_BOT_USERNAME = 'wallet_test_bot';
export const TEST_WEBHOOK_SECRET = 'test-webhook-secret-0123456789';
const TEST_PRIVATE_KEY = '9f2c5a1e7b3d4c6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f';
export const TEST_PUBLIC_KEY = ed25519PublicKey(TEST_PRIVATE_KEY);

/** The server's environment for a Telegram of the tests' own. */
export function telegramEnv(): Record<string, string> {
  return {
    TELEGRAM_BOT_TOKEN: TEST_BOT_TOKEN,
    TELEGRAM_BOT_USERNAME: TEST_BOT_USERNAME,
    TELEGRAM_PUBLIC_KEY: TEST_PUBLIC_KEY,
    TELEGRAM_API_ROOT: 'sandbox',
    TELEGRAM_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
  };
}

let nextId = 5_000_000 + Math.floor(Math.random() * 1_000_000) * 100;

/** A Telegram user nobody has seen yet. */
export function newTelegramUser(overrides: Partial<TelegramUser> = {}): TelegramUser {
  const id = ++nextId;
  return { id, first_name: `Tester${id}`, username: `tester${id}`, language_code: 'en', ...overrides };
}

/** Init data as Telegram hands it to the mini app, signed with the test bot's token and key; `ageS` back-dates it. */
export function initDataFor(user: TelegramUser, options: { ageS?: number; token?: string } = {}): string {
  return signInitData(
    { user, authDate: Math.floor(Date.now() / 1000) - (options.ageS ?? 0), queryId: `AAH${user.id}` },
    { botToken: options.token ?? TEST_BOT_TOKEN, privateKey: TEST_PRIVATE_KEY },
  );
}

/** The same init data with one field changed after signing: what a forger without the token can make. */
export function forgedInitData(user: TelegramUser): string {
  const params = new URLSearchParams(initDataFor(user));
  params.set('user', JSON.stringify({ ...user, id: user.id + 1 }));
  return params.toString();
}

let updateId = 1000;

/** The Update Telegram posts to the webhook when a user sends `/start <code>` to the bot. */
export function startUpdate(user: TelegramUser, code: string) {
  const text = `/start ${code}`;
  return {
    update_id: ++updateId,
    message: {
      message_id: updateId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: user.id, type: 'private', first_name: user.first_name, username: user.username },
      from: { id: user.id, is_bot: false, first_name: user.first_name, username: user.username, language_code: user.language_code },
      text,
      entities: [{ type: 'bot_command', offset: 0, length: 6 }],
    },
  };
}

/** Posts an update to the webhook as Telegram does. */
export function postUpdate(baseUrl: string, update: unknown, secret = TEST_WEBHOOK_SECRET): Promise<Response> {
  return fetch(`${baseUrl}/api/tg/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret },
    body: JSON.stringify(update),
  });
}

export type BotCall = { method: string; payload: { chat_id?: number; text?: string; reply_markup?: unknown } };

/** What the bot said to a chat, through the server's Bot API stand-in. */
export async function botMessagesTo(baseUrl: string, chatId: number): Promise<string[]> {
  const calls = (await (await fetch(`${baseUrl}/sandbox/telegram/sent`)).json()) as BotCall[];
  return calls.filter((call) => call.method === 'sendMessage' && call.payload.chat_id === chatId).map((call) => call.payload.text ?? '');
}
