/**
 * The Telegram bot as the rest of the server sees it: http hands it the webhook's updates, the domain's messenger
 * service links accounts for it. bot.ts implements it on grammY; the composition root (accounts.ts) builds it.
 */
import type { Update } from 'grammy/types';

/** Who sent `/start <code>`, as Telegram describes the sender. */
export type BotSender = { id: number; first_name: string; last_name?: string | undefined; username?: string | undefined; language_code?: string | undefined };

/**
 * The port through which the bot links accounts (the domain's messenger service implements it): resolves once the
 * sender's Telegram account is linked to the user who asked for `code`; a refusal throws an error whose `code` is
 * one of SPEC §8's B2C_USM0022…0027, anything else is answered with 'contact support'.
 */
export type BotAccountLinking = { linkFromBot(code: string, sender: BotSender): Promise<unknown> };

export type WalletBot = {
  /** Handles one update as received by the webhook; resolves once the bot has answered. */
  handleUpdate: (update: Update) => Promise<void>;
  webhookSecret: string;
  /** Registers the webhook with Telegram (TELEGRAM_SET_WEBHOOK=on). */
  setWebhook: (url: string) => Promise<void>;
};

/** What the user is told about: SPEC issue 36's events of their money. */
export type NoticeEvent = 'deposit.pending' | 'deposit.credited' | 'withdrawal.sent' | 'withdrawal.completed' | 'withdrawal.failed' | 'buy.completed';

/** One message about the user's money, in their language; `amount` is an exact decimal with a point. */
export type Notice = { event: NoticeEvent; language: 'en' | 'ru'; currency: string; amount: string };

/** Telegram took the message, or did not: `permanent` when trying again cannot help (the user blocked the bot, no such chat). */
export type NoticeOutcome = { ok: true } | { ok: false; permanent: boolean; error: string };

/** The bot's side of notifications: sends one message to a private chat (the user's Telegram id). */
export type NoticeSender = { send: (chatId: number, notice: Notice) => Promise<NoticeOutcome> };
