/**
 * The bot's messages about a user's money (issue 36 item 2): a deposit pending and credited, a withdrawal sent,
 * completed or failed, a purchase completed. An event is queued in telegram_notifications by the transaction that
 * changed the order's state (moveOrder, recordTransfers), under `<event>:<order id>`, so it exists exactly when its
 * cause committed and never twice; only for users whose Telegram is linked and whose switch is on. Queuing is one
 * local INSERT: Telegram is never called on the money path, and its failures never roll money back.
 *
 * `deliverNotifications`, run by the `notifications.telegram` job, claims due rows with FOR UPDATE SKIP LOCKED and
 * a lease (any number of workers share them, none sends a row another holds), re-reads the link, the switch and the
 * language at sending (unlinked or switched off since: skipped), sends, and marks the row sent; a refusal is retried
 * with backoff up to MAX_ATTEMPTS, a permanent one (the user blocked the bot) gives up at once. A worker that dies
 * between Telegram's answer and the mark sends that message again once its lease runs out: the one way a message
 * can go twice, as the Bot API has no idempotency key.
 */
import type pg from 'pg';
import { unitsFromRow } from '../db/amounts.ts';
import { formatMoney, money } from '../../lib/money.ts';
import type { Logger } from '../log.ts';
import type { Notice, NoticeEvent, NoticeSender } from '../adapters/telegram/port.ts';
import type { Queryable } from './ledger.ts';

export type { NoticeEvent };

/** An order table as moveOrder names it (ORDER_TABLES): the table and its history item's column. */
type OrderTableName = { readonly table: string; readonly history: string };

/** The moves that tell the user something, by order table and new state. */
const MOVE_EVENTS: Readonly<Record<string, Readonly<Record<string, NoticeEvent>>>> = {
  chain_deposits: { CREDITED: 'deposit.credited' },
  withdrawals: {
    BROADCAST: 'withdrawal.sent',
    COMPLETED: 'withdrawal.completed',
    FAILED: 'withdrawal.failed',
  },
  buy_orders: { COMPLETED: 'buy.completed' },
};

/** The event an order's move to `state` is, if any. */
export function moveEvent(table: string, state: string): NoticeEvent | undefined {
  return MOVE_EVENTS[table]?.[state];
}

/**
 * Queues one event of an order, in the caller's transaction; a no-op when it was queued before, when the user has no
 * linked Telegram or switched the messages off. A deposit whose history item is a purchase's (an on-ramp's coins)
 * is told as the purchase, not as a deposit.
 */
export async function queueOrderNotification(db: Queryable, order: OrderTableName, orderId: string, event: NoticeEvent): Promise<void> {
  const onlyType = event.startsWith('deposit.') ? 'DEPOSIT' : null;
  await db.query(
    `INSERT INTO telegram_notifications (event_key, event, user_id, wallet_transaction_id)
     SELECT $1, $2, a.user_id, t.id
       FROM ${order.table} o
       JOIN wallet_transactions t ON t.id = o.${order.history}
       JOIN wallet_accounts a ON a.id = t.wallet_account_id
       JOIN users u ON u.id = a.user_id AND u.telegram_notifications
      WHERE o.id = $3 AND ($4::text IS NULL OR t.transaction_type = $4)
        AND EXISTS (SELECT 1 FROM telegram_accounts ta WHERE ta.user_id = a.user_id)
     ON CONFLICT (event_key) DO NOTHING`,
    [`${event}:${orderId}`, event, orderId, onlyType],
  );
}

/** Tries per message before it is given up. */
export const MAX_ATTEMPTS = 8;

export type DeliveryOptions = {
  log: Logger;
  /** Rows one pass claims. */
  batch?: number;
  /** How long a claimed row is kept from other workers while it is being sent. */
  leaseMs?: number;
  /** The wait after the first failed try, doubled after each (capped at an hour). */
  baseDelayMs?: number;
};

type Claimed = {
  id: string;
  userId: string;
  event: NoticeEvent;
  attempts: number;
  chatId: string | null;
  language: 'ENG' | 'RUS';
  on: boolean;
  currency: string;
  amount: string;
};

/** Sends every due message once; returns how many Telegram took. */
export async function deliverNotifications(pool: pg.Pool, sender: NoticeSender, options: DeliveryOptions): Promise<number> {
  const { log } = options;
  const baseMs = options.baseDelayMs ?? 5_000;
  const claimed = await pool.query<Claimed>(
    `WITH claimed AS (
       UPDATE telegram_notifications SET attempts = attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond'
        WHERE id IN (SELECT id FROM telegram_notifications WHERE outcome IS NULL AND next_attempt_at <= now()
                      ORDER BY next_attempt_at, created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING id, event, attempts, user_id, wallet_transaction_id, created_at)
     SELECT c.id, c.user_id AS "userId", c.event, c.attempts, ta.telegram_id::text AS "chatId", u.language, u.telegram_notifications AS "on", t.currency, t.amount::text AS amount
       FROM claimed c JOIN users u ON u.id = c.user_id JOIN wallet_transactions t ON t.id = c.wallet_transaction_id
       LEFT JOIN telegram_accounts ta ON ta.user_id = c.user_id
      ORDER BY c.created_at, c.id`,
    [options.batch ?? 20, options.leaseMs ?? 60_000],
  );
  const finish = (id: string, outcome: 'sent' | 'skipped' | 'failed', error: string | null) =>
    pool.query(`UPDATE telegram_notifications SET outcome = $2, sent_at = CASE WHEN $2 = 'sent' THEN now() END, last_error = $3 WHERE id = $1 AND outcome IS NULL`, [id, outcome, error]);
  const deliver = async (row: Claimed): Promise<boolean> => {
    // Unlinked or switched off since it was queued: nothing is said.
    if (row.chatId === null || !row.on) {
      await finish(row.id, 'skipped', null);
      return false;
    }
    let outcome: Awaited<ReturnType<NoticeSender['send']>>;
    try {
      const notice: Notice = {
        event: row.event,
        language: row.language === 'RUS' ? 'ru' : 'en',
        currency: row.currency,
        amount: formatMoney(money(row.currency, unitsFromRow(row.amount, 'amount'))),
      };
      outcome = await sender.send(Number(row.chatId), notice);
    } catch (error) {
      outcome = {
        ok: false,
        permanent: false,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    if (outcome.ok) {
      await finish(row.id, 'sent', null);
      return true;
    }
    if (outcome.permanent || row.attempts >= MAX_ATTEMPTS) {
      log.warn(
        {
          notification: row.id,
          event: row.event,
          attempts: row.attempts,
          error: outcome.error,
        },
        'telegram notification given up',
      );
      await finish(row.id, 'failed', outcome.error);
      return false;
    }
    const wait = Math.min(baseMs * 2 ** (row.attempts - 1), 3_600_000);
    log.warn(
      {
        notification: row.id,
        event: row.event,
        attempt: row.attempts,
        error: outcome.error,
        retryInMs: wait,
      },
      'telegram notification not sent; will retry',
    );
    await pool.query(`UPDATE telegram_notifications SET next_attempt_at = now() + $2 * interval '1 millisecond', last_error = $3 WHERE id = $1 AND outcome IS NULL`, [row.id, wait, outcome.error]);
    return false;
  };
  // One user's messages go in the order their events happened; different users' at once.
  const byUser = new Map<string, Claimed[]>();
  for (const row of claimed.rows) byUser.set(row.userId, [...(byUser.get(row.userId) ?? []), row]);
  let sent = 0;
  await Promise.all(
    [...byUser.values()].map(async (rows) => {
      for (const row of rows) if (await deliver(row)) sent++;
    }),
  );
  return sent;
}
