import { createHmac } from 'node:crypto';
import { Bot, type Context } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
import type { Logger } from '../../log.ts';
import type { BotAccountLinking, WalletBot } from './port.ts';

/**
 * The wallet's Telegram bot (grammY, webhook mode): `/start <code>` links the sender's Telegram account to the web
 * user who asked for the code (POST /user/tg/code), and every answer is in the sender's language. Updates arrive
 * at POST /api/tg/webhook with Telegram's secret-token header; the bot's own calls go to `apiRoot` (Telegram, or
 * the stand-in under /sandbox/telegram in development and tests, so nothing reaches the network there).
 */

type Language = 'en' | 'ru';

/** SPEC §8's codes of a refused link: the `code` of what `linking.linkFromBot` throws, each with its own answer. */
const LINK_CODES = ['B2C_USM0022', 'B2C_USM0023', 'B2C_USM0024', 'B2C_USM0025', 'B2C_USM0026', 'B2C_USM0027'] as const;
type LinkCode = (typeof LINK_CODES)[number];
/** The answer to a failure that carries none of them: contact support. */
const SUPPORT_CODE: LinkCode = 'B2C_USM0027';

const TEXTS: Record<Language, Record<'linked' | 'welcome' | 'open' | LinkCode, string>> = {
  en: {
    linked: 'Your Telegram account is now linked to your wallet. You can open the wallet right here.',
    welcome: 'Welcome! Open the wallet to receive, send, swap and buy crypto.',
    open: 'Open wallet',
    B2C_USM0022: 'Something went wrong. Please try again later or contact support.',
    B2C_USM0023: 'This link has expired. Please open the web app and link the account again.',
    B2C_USM0024: 'This link has already been used. Open the wallet to sign in to the existing account.',
    B2C_USM0025: 'This link is not valid. Please open the web app and link the account again.',
    B2C_USM0026: 'This Telegram account is already linked to another wallet account.',
    B2C_USM0027: 'Something went wrong. Please try again later or contact support.',
  },
  ru: {
    linked: 'Ваш аккаунт Telegram привязан к кошельку. Кошелёк можно открыть прямо здесь.',
    welcome: 'Добро пожаловать! Откройте кошелёк, чтобы получать, отправлять, обменивать и покупать криптовалюту.',
    open: 'Открыть кошелёк',
    B2C_USM0022: 'Что-то пошло не так. Попробуйте позже или напишите в поддержку.',
    B2C_USM0023: 'Срок действия ссылки истёк. Откройте веб-приложение и привяжите аккаунт снова.',
    B2C_USM0024: 'Эта ссылка уже использована. Откройте кошелёк, чтобы войти в существующий аккаунт.',
    B2C_USM0025: 'Ссылка недействительна. Откройте веб-приложение и привяжите аккаунт снова.',
    B2C_USM0026: 'Этот аккаунт Telegram уже привязан к другому аккаунту кошелька.',
    B2C_USM0027: 'Что-то пошло не так. Попробуйте позже или напишите в поддержку.',
  },
};

export function languageOf(code: string | undefined): Language {
  return code?.toLowerCase().startsWith('ru') ? 'ru' : 'en';
}

/** The code of a refused link, when the error carries one of SPEC §8's. */
function linkCodeOf(error: unknown): LinkCode | undefined {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  return LINK_CODES.find((known) => known === code);
}

/** What the bot needs of the Telegram settings (composition passes TELEGRAM_* as read by the configuration). */
export type WalletBotOptions = Readonly<{
  botUsername: string;
  /** Where the bot's calls to the Bot API go: Telegram, or the local stand-in under /sandbox/telegram. */
  apiRoot: string;
  /** The `X-Telegram-Bot-Api-Secret-Token` Telegram sends with each update; derived from the token when unset. */
  webhookSecret: string | undefined;
  /** The address the bot's 'open wallet' button opens. */
  miniAppUrl: string;
}>;

/** The secret Telegram sends in `X-Telegram-Bot-Api-Secret-Token`: configured, or derived from the bot token. */
export function webhookSecretOf(options: Pick<WalletBotOptions, 'webhookSecret'>, botToken: string): string {
  return options.webhookSecret ?? createHmac('sha256', 'wallet-telegram-webhook').update(botToken).digest('base64url');
}

/** `messenger` is the account-linking port; `config` the bot's options. */
export function createWalletBot(deps: { config: WalletBotOptions; botToken: string; messenger: BotAccountLinking; log: Logger }): WalletBot {
  const { config, messenger, log } = deps;
  const botInfo: UserFromGetMe = {
    // A bot token is `<bot id>:<secret>` (checked when the configuration is read).
    id: Number(deps.botToken.split(':')[0]),
    is_bot: true,
    first_name: 'Wallet',
    username: config.botUsername,
    can_join_groups: false,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: true,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
  } as UserFromGetMe;
  const bot = new Bot(deps.botToken, { botInfo, client: { apiRoot: config.apiRoot } });

  // Telegram only opens https pages as a mini app; a local http address gets a plain link.
  const openButton = (language: Language) => ({
    inline_keyboard: [[config.miniAppUrl.startsWith('https://') ? { text: TEXTS[language].open, web_app: { url: config.miniAppUrl } } : { text: TEXTS[language].open, url: config.miniAppUrl }]],
  });

  const answer = async (ctx: Context, key: keyof (typeof TEXTS)['en']) => {
    const language = languageOf(ctx.from?.language_code);
    await ctx.reply(TEXTS[language][key], { reply_markup: openButton(language) });
  };

  bot.command('start', async (ctx) => {
    const code = ctx.match.trim();
    const from = ctx.from;
    if (!code || !from || ctx.chat.type !== 'private') return answer(ctx, 'welcome');
    try {
      await messenger.linkFromBot(code, { id: from.id, first_name: from.first_name, last_name: from.last_name, username: from.username, language_code: from.language_code });
      await answer(ctx, 'linked');
    } catch (error) {
      const code = linkCodeOf(error);
      if (code) return answer(ctx, code);
      log.error({ err: error }, 'linking from the bot failed');
      await answer(ctx, SUPPORT_CODE);
    }
  });
  bot.on('message', (ctx) => answer(ctx, 'welcome'));
  bot.catch((error) => log.error({ err: error.error, updateId: error.ctx.update.update_id }, 'the bot failed on an update'));

  return {
    handleUpdate: (update) => bot.handleUpdate(update),
    webhookSecret: webhookSecretOf(config, deps.botToken),
    async setWebhook(url) {
      await bot.api.setWebhook(url, { secret_token: webhookSecretOf(config, deps.botToken), allowed_updates: ['message'] });
      log.info({ url }, 'telegram webhook set');
    },
  };
}
