import { Hono } from 'hono';
import { z } from 'zod';
import type { WalletBot } from '../adapters/telegram/port.ts';

/** One call the bot made to the Bot API, as the stand-in received it. */
export type BotApiCall = { method: string; payload: Record<string, unknown>; at: string };

const KEPT_CALLS = 200;
const startQuery = z.object({
  code: z.string().min(1).max(128),
  id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).default(100_000_001),
  language_code: z.string().max(8).regex(/^[a-z-]*$/i).default('en'),
});

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}

/**
 * The stand-in for Telegram's Bot API under /sandbox/telegram, on when TELEGRAM_API_ROOT points here (the
 * development mode's default, and the tests'): the bot's calls are answered locally and kept for a look at
 * GET /sandbox/telegram/sent; in development mode GET /sandbox/telegram/start?code=… plays the messenger's part
 * of `/start <code>` for the development Telegram user.
 */
export function createTelegramSandbox(deps: { bot: WalletBot | undefined; devMode: boolean; miniAppUrl: string }): Hono {
  const app = new Hono();
  const calls: BotApiCall[] = [];
  let messageId = 1;

  app.get('/sent', (c) => c.json(calls));

  app.get('/start', async (c) => {
    if (!deps.devMode || !deps.bot) return c.json({ exceptionCode: 'NOT_FOUND', message: 'Only in development mode' }, 404);
    const query = startQuery.parse(c.req.query());
    const from = { id: query.id, is_bot: false, first_name: 'Test', username: 'test_user', language_code: query.language_code };
    const text = `/start ${query.code}`;
    const before = calls.length;
    await deps.bot.handleUpdate({
      update_id: Date.now() % 1_000_000_000,
      message: { message_id: messageId++, date: Math.floor(Date.now() / 1000), chat: { id: query.id, type: 'private', first_name: 'Test' }, from, text, entities: [{ type: 'bot_command', offset: 0, length: 6 }] },
    });
    const reply = calls.slice(before).find((call) => call.method === 'sendMessage');
    const said = typeof reply?.payload.text === 'string' ? reply.payload.text : '';
    return c.html(`<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Bot</title></head>
<body style="font-family:system-ui,sans-serif;max-width:540px;margin:0 auto;padding:32px 16px">
<p style="color:#888">Development stand-in for the Telegram bot</p><p data-testid="bot-reply">${escapeHtml(said)}</p><a href="${escapeHtml(deps.miniAppUrl)}">Open the mini app</a></body></html>`);
  });

  app.post('/:bot/:method', async (c) => {
    const { bot, method } = c.req.param();
    if (!bot.startsWith('bot')) return c.json({ ok: false, error_code: 404, description: 'Not Found' }, 404);
    let payload: Record<string, unknown> = {};
    try {
      payload = (await c.req.json()) as Record<string, unknown>;
    } catch {
      payload = {};
    }
    calls.push({ method, payload, at: new Date().toISOString() });
    if (calls.length > KEPT_CALLS) calls.splice(0, calls.length - KEPT_CALLS);
    if (method === 'sendMessage') {
      const chatId = Number(payload.chat_id);
      return c.json({ ok: true, result: { message_id: messageId++, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: 'private' }, text: String(payload.text ?? '') } });
    }
    return c.json({ ok: true, result: true });
  });

  return app;
}
