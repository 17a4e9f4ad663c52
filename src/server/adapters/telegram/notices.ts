import { Api, GrammyError } from 'grammy';
import type { Notice, NoticeEvent, NoticeSender } from './port.ts';

/**
 * The bot's messages about a user's money (domain/notifications.ts decides what and when), sent with the Bot API's
 * `sendMessage` to the user's private chat, in their language, with the bot's 'Open wallet' button. Calls go to
 * `apiRoot`: Telegram, or the stand-in under /sandbox/telegram in development and tests.
 */

type Texts = Record<NoticeEvent, (amount: string) => string> & { open: string };

const TEXTS: Record<Notice['language'], Texts> = {
  en: {
    'deposit.pending': (amount) => `Incoming deposit: ${amount}. It is pending confirmation on the network.`,
    'deposit.credited': (amount) => `Deposit credited: ${amount} is in your wallet.`,
    'withdrawal.sent': (amount) => `Withdrawal sent: ${amount} is on its way.`,
    'withdrawal.completed': (amount) => `Withdrawal completed: ${amount} has arrived.`,
    'withdrawal.failed': (amount) => `Withdrawal failed: ${amount} was not sent. Open the wallet for details.`,
    'buy.completed': (amount) => `Purchase completed: ${amount} is in your wallet.`,
    open: 'Open wallet',
  },
  ru: {
    'deposit.pending': (amount) => `Входящий перевод: ${amount}. Ожидает подтверждения в сети.`,
    'deposit.credited': (amount) => `Зачислено: ${amount} на вашем кошельке.`,
    'withdrawal.sent': (amount) => `Вывод отправлен: ${amount} в пути.`,
    'withdrawal.completed': (amount) => `Вывод завершён: ${amount} доставлено.`,
    'withdrawal.failed': (amount) => `Вывод не удался: ${amount} не отправлено. Подробности в кошельке.`,
    'buy.completed': (amount) => `Покупка завершена: ${amount} на вашем кошельке.`,
    open: 'Открыть кошелёк',
  },
};

/** The text of a notice (exported for the tests' expectations). */
export function noticeText(notice: Notice): string {
  return TEXTS[notice.language][notice.event](`${notice.amount} ${notice.currency}`);
}

/** Bot API refusals that another try cannot change: bad request (no such chat), the user blocked the bot. */
const PERMANENT = new Set([400, 403]);

export function createNoticeSender(options: { apiRoot: string; botToken: string; miniAppUrl: string; timeoutS?: number }): NoticeSender {
  const api = new Api(options.botToken, { apiRoot: options.apiRoot, timeoutSeconds: options.timeoutS ?? 15 });
  const https = options.miniAppUrl.startsWith('https://');
  return {
    async send(chatId, notice) {
      const open = TEXTS[notice.language].open;
      try {
        await api.sendMessage(chatId, noticeText(notice), {
          // Telegram only opens https pages as a mini app; a local http address gets a plain link.
          reply_markup: { inline_keyboard: [[https ? { text: open, web_app: { url: options.miniAppUrl } } : { text: open, url: options.miniAppUrl }]] },
        });
        return { ok: true };
      } catch (error) {
        if (error instanceof GrammyError) return { ok: false, permanent: PERMANENT.has(error.error_code), error: `${error.error_code} ${error.description}` };
        return { ok: false, permanent: false, error: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
