/**
 * Hedging (issue 28 item 6): with an exchange account configured, the desk brings its net exposure in an asset
 * (exposure.ts) back to zero with a market order whenever it passes HEDGE_THRESHOLD_USD, and records the hedge with
 * the swaps it covers. The stablecoins are the quote side and are not hedged. A hedge is recorded (SENT) before it
 * is sent; one whose answer never came stays SENT and stops that asset's hedging until an operator settles it, so a
 * lost answer is never hedged twice.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { formatUnits, parseDecimal } from '../../../lib/amount.ts';
import type { HedgePort, RatesPort } from '../../adapters/rates/port.ts';
import type { Logger } from '../../log.ts';
import { ASSET_DECIMALS, deskExposure } from './exposure.ts';
import { NOW } from '../orders/sql-set.ts';
import { moveOrder, ORDER_TABLES } from '../orders/state.ts';

/** The quote side of every hedge: never hedged itself. */
const QUOTE_ASSETS = new Set(['USDT', 'USDC']);
/** Hedge amounts go out with at most this many decimals (exchanges' lot sizes are coarser still). */
const ORDER_DECIMALS = 8;

export type HedgeSettings = { exchange: string; thresholdUsd: string };

/**
 * One round of hedging, by one process at a time: the round holds a session advisory lock from reading the exposure to
 * the last order's answer, so two processes (or a run whose job lease another took over) never hedge one exposure
 * twice; the one that finds it taken hedges nothing. Returns how many hedges were sent.
 */
export async function hedgeExposure(pool: pg.Pool, deps: { rates: RatesPort; exchange: HedgePort; settings: HedgeSettings; log: Logger }): Promise<number> {
  const lock = await pool.connect();
  try {
    const taken = await lock.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtext('desk-hedge')) AS locked`);
    if (!taken.rows[0]?.locked) return 0;
    try {
      return await hedgeRound(pool, deps);
    } finally {
      await lock.query(`SELECT pg_advisory_unlock(hashtext('desk-hedge'))`);
    }
  } finally {
    lock.release();
  }
}

async function hedgeRound(pool: pg.Pool, deps: { rates: RatesPort; exchange: HedgePort; settings: HedgeSettings; log: Logger }): Promise<number> {
  const threshold = parseDecimal(deps.settings.thresholdUsd, 8);
  const table = await deps.rates.prices();
  let sent = 0;
  for (const exposure of await deskExposure(pool, table)) {
    if (QUOTE_ASSETS.has(exposure.asset) || exposure.usd === undefined) continue;
    const size = exposure.usd < 0n ? -exposure.usd : exposure.usd;
    if (size <= threshold) continue;
    const unsettled = await pool.query(`SELECT 1 FROM desk_hedges WHERE asset = $1 AND state = 'SENT'`, [exposure.asset]);
    if (unsettled.rowCount) {
      deps.log.error({ asset: exposure.asset }, 'a hedge of this asset has no answer from the exchange: hedging it waits for an operator');
      continue;
    }
    const net = exposure.net < 0n ? -exposure.net : exposure.net;
    const amount = formatUnits(net / 10n ** BigInt(ASSET_DECIMALS - ORDER_DECIMALS), ORDER_DECIMALS);
    if (amount === '0') continue;
    // Long the asset (swaps sold it to the desk): sell it; short: buy it back.
    const side = exposure.net > 0n ? 'sell' : 'buy';
    const clientOrderId = `hedge-${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const covered = await pool.query<{ id: string }>(
      `SELECT o.id FROM swap_orders o
        WHERE o.state = 'COMPLETED' AND o.closed_at > coalesce((SELECT max(h.created_at) FROM desk_hedges h WHERE h.asset = $1), '-infinity')
          AND (split_part(o.source_currency, '_', 1) = $1 OR split_part(o.destination_currency, '_', 1) = $1)`,
      [exposure.asset],
    );
    // At most one SENT hedge per asset (desk_hedges_one_sent): of two runs racing here, one sends and the other stops.
    const inserted = await pool.query<{ id: string }>(
      `INSERT INTO desk_hedges (client_order_id, exchange, asset, side, amount, exposure_usd, state, swap_order_ids)
       VALUES ($1, $2, $3, $4, $5, $6, 'SENT', $7) ON CONFLICT (asset) WHERE state = 'SENT' DO NOTHING RETURNING id`,
      [clientOrderId, deps.settings.exchange, exposure.asset, side, amount, formatUnits(exposure.usd, 8), JSON.stringify(covered.rows.map((r) => r.id))],
    );
    const id = inserted.rows[0]?.id;
    if (id === undefined) continue;
    try {
      const order = await deps.exchange.marketOrder({ asset: exposure.asset, side, amount, clientOrderId });
      await moveOrder(pool, ORDER_TABLES.hedge, id, {
        from: 'SENT',
        to: 'FILLED',
        set: { order_id: order.orderId, price: order.price, filled: order.filled, fee: order.fee, fee_currency: order.feeCurrency, closed_at: NOW },
        // An operator who settled it meanwhile decided: theirs stands.
        ifMoved: 'skip',
      });
      deps.log.info({ asset: exposure.asset, side, amount, orderId: order.orderId, price: order.price }, 'hedged the desk');
      sent += 1;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if ((error as { refused?: unknown }).refused === true) {
        // Refused by the exchange (keys, balance, lot size): nothing was bought or sold; the next round tries again.
        await moveOrder(pool, ORDER_TABLES.hedge, id, { from: 'SENT', to: 'FAILED', set: { error: message, closed_at: NOW }, ifMoved: 'skip' });
        deps.log.error({ err: error, asset: exposure.asset, side, amount }, 'a hedge was refused');
      } else {
        // No answer: the order may have been placed. It stays SENT (see above) for an operator to settle.
        await pool.query(`UPDATE desk_hedges SET error = $2 WHERE id = $1`, [id, message]);
        deps.log.error({ err: error, asset: exposure.asset, side, amount, clientOrderId }, 'a hedge got no answer from the exchange');
      }
    }
  }
  return sent;
}
