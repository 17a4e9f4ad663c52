/**
 * An on-ramp purchase's life on our side (issue 32 item 3): confirming it shows it Pending in the history and
 * answers the provider's signed widget link for the buyer's own deposit address, the amount, the fiat, our order id
 * as its external transaction id and the order's status screen as the way back; the order then waits for the coins.
 * A purchase given up (the buyer came back without paying, or it ran past BUY_ORDER_TTL_S) ends only when the
 * provider has no transaction for it or has failed it; one it is still working on waits on.
 */
import type pg from 'pg';
import { formatUnits } from '../../../lib/amount.ts';
import { ROUTES } from '../../../lib/routes.ts';
import type { PayerDetails } from '../../adapters/card/port.ts';
import { ON_RAMP_STATUSES, type OnRampProvider, type OnRampStatus, type OnRampTransaction } from '../../adapters/onramp/port.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { Logger } from '../../log.ts';
import { notifyAccountChanged } from '../account-changes.ts';
import { recordHistory } from '../orders/history.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';
import { coinOf, type BuyDeps } from './context.ts';
import { BuyError, orderExpired } from './errors.ts';
import { fromOnRamp, onRampCoinOf } from './onramp.ts';
import { BUYING_OFF_MESSAGE, CANCELLED_BY_USER, FIAT_DECIMALS, NOT_PAID_IN_TIME } from './rules.ts';
import { buyHistoryItem, lockBuyOrder, type BuyOrderRow } from './store.ts';
import { unitsFromRow } from '../../db/amounts.ts';

const EXPIRY_BATCH = 20;

/** The provider's statuses by how far along they are: a status never moves an order back. */
export const STATUS_RANK: Readonly<Record<OnRampStatus, number>> = { pending: 1, waitingAuthorization: 2, waitingPayment: 2, completed: 3, failed: 3 };

export function isOnRampStatus(status: string | null): status is OnRampStatus {
  return (ON_RAMP_STATUSES as readonly string[]).includes(status ?? '');
}

/**
 * Why the provider failed a purchase, as the order keeps it: the failed step's code where it gave one (the browser
 * has words for each in both languages), else its own words, else ours.
 */
export function onRampFailure(transaction: Pick<OnRampTransaction, 'failureCode' | 'failureReason'> | undefined, fallback: string): string {
  return transaction?.failureCode?.trim() || transaction?.failureReason?.trim() || fallback;
}

export function onRampOf(deps: Pick<BuyDeps, 'onRamp'>): OnRampProvider {
  if (!deps.onRamp) throw new BuyError('B2C_UNAVAILABLE', BUYING_OFF_MESSAGE);
  return deps.onRamp;
}

/** The order's status screen (SPEC §2 transaction details of its history item), on the origin the buyer came from. */
export function statusScreenUrl(returnUrl: string, currency: string, historyId: string): string {
  const path = ROUTES.transaction.replace(':currency', encodeURIComponent(currency)).replace(':id', historyId).replace(':type', 'FIAT_DEPOSIT');
  return new URL(path, returnUrl).toString();
}

/** The provider's page in the buyer's language, where it has one (SPEC §3 request parameters: browserLanguage). */
function languageOf(payer: PayerDetails): string | undefined {
  return /^[a-z]{2}\b/i.exec(payer.browserLanguage ?? '')?.[0]?.toLowerCase();
}

/**
 * SPEC §3 order confirm with an on-ramp: NEW → PENDING with its history item and the signed link, in one
 * transaction (signing is local); again answers the same link.
 */
export async function confirmOnRampOrder(deps: BuyDeps, order: BuyOrderRow, payer: PayerDetails): Promise<{ redirectUrl: string }> {
  const onRamp = onRampOf(deps);
  if (order.redirectUrl && order.state !== 'NEW') return { redirectUrl: order.redirectUrl };
  if (order.state !== 'NEW' || order.expiresAt.getTime() <= Date.now()) throw orderExpired();
  const coin = coinOf(deps, order.currency);
  const { code } = await onRampCoinOf(deps, onRamp, order.currency);
  const stored = await deps.pool.query<{ address: string; derivationIndex: number; mac: string | null }>(
    'SELECT address, derivation_index AS "derivationIndex", mac FROM deposit_addresses WHERE wallet_account_id = $1 AND network = $2',
    [order.walletAccountId, coin.network],
  );
  const row = stored.rows[0];
  if (!row) throw new BuyError('B2C_NO_ADDRESS', `Add ${order.currency} to your assets first: the coins are sent to its deposit address`);
  // The coins go where the on-ramp is told: only to the address the custody's keys give this account.
  const walletAddress = await deps.addressGuard.check(deps.pool, { network: coin.network, walletAccountId: order.walletAccountId, ...row });
  // The guard has logged why; the buyer is told to come back, and nothing is sent anywhere.
  if (!walletAddress) throw new BuyError('B2C_UNAVAILABLE', `Buying ${order.currency} is not available right now. Please try again later.`);
  const confirmed = await inTransaction(deps.pool, async (client) => {
    const locked = await lockBuyOrder(client, order.id);
    if (!locked) throw new BuyError('B2C_ORDER_NOT_FOUND', 'No such order in this account');
    if (locked.state !== 'NEW') return locked.redirectUrl && locked.state !== 'EXPIRED' ? locked.redirectUrl : undefined;
    if (locked.expiresAt.getTime() <= Date.now()) return undefined;
    const shown = await recordHistory(client, buyHistoryItem(order, { network: coin.network, toAddress: walletAddress }));
    const redirectUrl = onRamp.widgetUrl({
      code,
      walletAddress,
      fiat: order.fiatCurrency,
      fiatAmount: formatUnits(unitsFromRow(order.fiatAmount, 'fiat_amount'), FIAT_DECIMALS),
      method: order.methodCode,
      reference: order.id,
      customer: order.walletAccountId,
      returnUrl: statusScreenUrl(order.returnUrl, order.currency, shown),
      email: payer.email || undefined,
      language: languageOf(payer),
    });
    const set = { provider_payment_id: order.id, redirect_url: redirectUrl, wallet_address: walletAddress, wallet_transaction_id: shown, updated_at: NOW } as const;
    await moveOrder(client, ORDER_TABLES.buy, order.id, { from: 'NEW', to: 'PENDING', set });
    await notifyAccountChanged(client, order.walletAccountId);
    return redirectUrl;
  });
  if (!confirmed) throw orderExpired();
  return { redirectUrl: confirmed };
}

/** PENDING → FAILED with `reason`, unless its coins have already come (a linked deposit): then it waits for their credit. */
export async function failOnRampOrder(client: pg.PoolClient, log: Logger, order: Pick<BuyOrderRow, 'id' | 'state' | 'chainDepositId' | 'walletAccountId'>, reason: string): Promise<boolean> {
  if (order.state !== 'PENDING') return false;
  if (order.chainDepositId) {
    log.error({ order: order.id, deposit: order.chainDepositId, reason }, 'an on-ramp reports a purchase failed whose coins have arrived: the deposit stands');
    return false;
  }
  const moved = await moveOrder(client, ORDER_TABLES.buy, order.id, {
    from: 'PENDING',
    to: 'FAILED',
    set: { failure_reason: reason, updated_at: NOW },
    history: { state: 'FAILED', set: { failure_reason: reason } },
    ifMoved: 'skip',
  });
  if (moved) await notifyAccountChanged(client, order.walletAccountId);
  return moved;
}

/**
 * A pending purchase looked up at the provider (given up by the buyer, or past its time): without a transaction, or
 * with a failed one, it fails with `reason` (the provider's own when it gave one); otherwise it waits another
 * BUY_ORDER_TTL_S, its status noted. Answers whether it ended.
 */
async function reconcile(deps: BuyDeps, onRamp: OnRampProvider, orderId: string, reason: string): Promise<boolean> {
  const found = await fromOnRamp(onRamp.transaction(orderId));
  return inTransaction(deps.pool, async (client) => {
    const order = await lockBuyOrder(client, orderId);
    if (!order || order.state !== 'PENDING' || order.chainDepositId) return false;
    if (!found || found.status === 'failed') return failOnRampOrder(client, deps.log, order, onRampFailure(found, reason));
    const newer = !isOnRampStatus(order.providerStatus) || STATUS_RANK[found.status] > STATUS_RANK[order.providerStatus];
    await client.query(`UPDATE buy_orders SET expires_at = now() + $2 * interval '1 second', provider_status = CASE WHEN $3 THEN $4 ELSE provider_status END, updated_at = now() WHERE id = $1`, [
      order.id,
      deps.settings.orderTtlS,
      newer,
      found.status,
    ]);
    return false;
  });
}

/** The buyer came back without paying (issue 19 item 15): the purchase ends unless the provider is working on it. */
export async function cancelOnRampOrder(deps: BuyDeps, order: BuyOrderRow): Promise<void> {
  if (order.state !== 'PENDING' || order.chainDepositId || !deps.onRamp) return;
  await reconcile(deps, deps.onRamp, order.id, CANCELLED_BY_USER);
}

/** The worker: on-ramp purchases past their time, still waiting for coins, reconciled with the provider. */
export async function expireOnRampOrders(deps: BuyDeps): Promise<number> {
  if (!deps.onRamp) return 0;
  const due = await deps.pool.query<{ id: string }>(
    `SELECT id FROM buy_orders WHERE delivery = 'CHAIN' AND state = 'PENDING' AND chain_deposit_id IS NULL AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
    [EXPIRY_BATCH],
  );
  let ended = 0;
  for (const { id } of due.rows) {
    try {
      if (await reconcile(deps, deps.onRamp, id, NOT_PAID_IN_TIME)) ended += 1;
    } catch (error) {
      deps.log.warn({ err: error, order: id }, 'an on-ramp purchase past its time could not be looked up yet; will retry');
    }
  }
  return ended;
}
