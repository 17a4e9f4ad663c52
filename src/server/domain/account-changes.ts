/**
 * "This wallet account's assets or balances changed": a PostgreSQL notification sent in the transaction that
 * changes them, so every process drops its cached copy when (and only if) the change commits. Whatever moves a
 * user's money or assets calls notifyAccountChanged in its transaction (deposits, withdrawals, swaps, orders).
 */
import pg from 'pg';
import type { Queryable } from './ledger.ts';
import type { Logger } from '../log.ts';

export const ACCOUNT_CHANNEL = 'wallet_account_changed';

const localListeners = new Set<(walletAccountId: string) => void>();

export async function notifyAccountChanged(db: Queryable, walletAccountId: string): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [ACCOUNT_CHANNEL, walletAccountId]);
  for (const listener of localListeners) listener(walletAccountId);
}

/**
 * Told at once, in this process, that a transaction is changing an account (before it commits, which the
 * notification will confirm): a cache stops serving that account until then, so a client reading right after
 * its own change never gets the old balance.
 */
export function onLocalAccountChange(listener: (walletAccountId: string) => void): () => void {
  localListeners.add(listener);
  return () => localListeners.delete(listener);
}

export type AccountChangeListener = {
  /** True while notifications are known to arrive; a cache must not be trusted otherwise. */
  readonly healthy: boolean;
  close: () => Promise<void>;
};

/**
 * Listens on its own connection (outside the pool, so it never starves requests). When the connection drops,
 * `onReset` runs (everything cached may have missed a change) and it reconnects.
 */
export function listenAccountChanges(
  options: pg.ClientConfig,
  log: Logger,
  handlers: { onChange: (walletAccountId: string) => void; onReset: () => void },
): AccountChangeListener {
  let client: pg.Client | undefined;
  let healthy = false;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const down = (error?: unknown) => {
    if (!healthy && !client) return;
    healthy = false;
    handlers.onReset();
    const dead = client;
    client = undefined;
    dead?.removeAllListeners();
    // A late error of the dropped connection must find a listener, or it would end the process.
    dead?.on('error', () => {});
    void dead?.end().catch(() => {});
    if (closed) return;
    if (error) log.warn({ err: error }, 'account change notifications lost; reconnecting');
    retry = setTimeout(() => void connect(), 1000);
  };

  const connect = async () => {
    if (closed) return;
    const next = new pg.Client(options);
    client = next;
    next.on('error', down);
    next.on('end', () => down(new Error('connection ended')));
    next.on('notification', (message) => {
      if (message.channel === ACCOUNT_CHANNEL && message.payload) handlers.onChange(message.payload);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${ACCOUNT_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      healthy = true;
    } catch (error) {
      down(error);
    }
  };

  void connect();
  return {
    get healthy() {
      return healthy;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      healthy = false;
      const last = client;
      client = undefined;
      last?.removeAllListeners();
      last?.on('error', () => {});
      await last?.end().catch(() => {});
    },
  };
}
