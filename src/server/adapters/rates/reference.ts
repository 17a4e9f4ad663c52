/**
 * The development price source: a reference table shipped with the project, moved by a small bounded random walk.
 * Never in production (custody.ts refuses it there). The walk's state lives in the database (app_setting
 * 'rates.walk'), stepped by one worker at a time, so every process quotes the same prices; readers cache it for a
 * second. Codes listed in the row's `withheld` have no price, to show what users see without one (tests, demos).
 */
import type pg from 'pg';
import { randomInt } from 'node:crypto';
import { parseDecimal } from '../../../lib/amount.ts';
import { PRICE_DECIMALS, type PriceBasis, type PriceTable, type RatesPort, type StalePrice } from './port.ts';
import { inTransaction } from '../../db/transaction.ts';

/** Reference USD prices per base asset: the centre the walk never strays far from. */
export const REFERENCE_USD: Readonly<Record<string, string>> = {
  BTC: '65000',
  ETH: '3200',
  USDT: '1',
  USDC: '1',
  TRX: '0.12',
  LTC: '75',
  DOGE: '0.15',
  TON: '5.5',
};

/** Reference fiat units per USD. */
export const REFERENCE_FIAT_PER_USD: Readonly<Record<string, string>> = {
  USD: '1',
  EUR: '0.92',
  KZT: '480',
  UAH: '41',
  AZN: '1.7',
  CAD: '1.37',
  RUB: '90',
};

const STABLE = new Set(['USDT', 'USDC']);
/** Per step, in basis points of the price: volatile assets ±0.3%, stable ones ±0.02%. */
const STEP_BPS = { volatile: 30, stable: 2 };
/** How far from the reference the walk may go, in basis points: ±10%, stable ones ±0.5%. */
const BOUND_BPS = { volatile: 1000, stable: 50 };
const SETTING = 'rates.walk';
const CACHE_MS = 1000;

const scaled = (table: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(table).map(([k, v]) => [k, parseDecimal(v, PRICE_DECIMALS)])) as Record<string, bigint>;

const REFERENCE = scaled(REFERENCE_USD);
const FIAT = scaled(REFERENCE_FIAT_PER_USD);

/** One step of the walk for every asset, clamped to its band around the reference. */
export function walk(current: Readonly<Record<string, bigint>>, random: (min: number, max: number) => number = randomInt): Record<string, bigint> {
  const next: Record<string, bigint> = {};
  for (const [asset, reference] of Object.entries(REFERENCE)) {
    const kind = STABLE.has(asset) ? 'stable' : 'volatile';
    const price = current[asset] ?? reference;
    const step = BigInt(random(-STEP_BPS[kind], STEP_BPS[kind] + 1));
    const moved = (price * (10_000n + step)) / 10_000n;
    const low = (reference * (10_000n - BigInt(BOUND_BPS[kind]))) / 10_000n;
    const high = (reference * (10_000n + BigInt(BOUND_BPS[kind]))) / 10_000n;
    next[asset] = moved < low ? low : moved > high ? high : moved;
  }
  return next;
}

export type ReferenceRates = RatesPort & {
  /** Moves the walk one step (the worker's job); a no-op when another process is stepping it right now. */
  step(): Promise<void>;
};

/** The walk's row: its prices, and the assets or fiats (BTC, EUR) withheld to show a missing price (tests, demos). */
type WalkState = { prices?: Record<string, string>; withheld?: string[] };

const SOURCE = 'reference';

export function createReferenceRates(pool: pg.Pool): ReferenceRates {
  let cache: { table: PriceTable; until: number } | undefined;

  const read = async (): Promise<PriceTable> => {
    const result = await pool.query<{ value: WalkState; updated_at: Date; now: Date }>(
      'SELECT value, updated_at, now() AS now FROM app_setting WHERE key = $1',
      [SETTING],
    );
    const row = result.rows[0];
    const at = row?.updated_at ?? new Date();
    const withheld = new Set(row?.value.withheld ?? []);
    const usd: Record<string, bigint> = { ...REFERENCE };
    for (const [asset, value] of Object.entries(row?.value.prices ?? {})) {
      if (asset in REFERENCE && /^\d+$/.test(value)) usd[asset] = BigInt(value);
    }
    const current = { usd: {} as Record<string, bigint>, fiatPerUsd: {} as Record<string, bigint> };
    const lastKnown = { usd: {} as Record<string, StalePrice>, fiatPerUsd: {} as Record<string, StalePrice> };
    const basis: Record<string, PriceBasis> = {};
    for (const [side, prices] of [['usd', usd], ['fiatPerUsd', FIAT]] as const) {
      for (const [code, price] of Object.entries(prices)) {
        // Withheld: its last value stays known, as a feed that stopped would leave it.
        if (withheld.has(code)) lastKnown[side][code] = { price, at };
        else {
          current[side][code] = price;
          basis[code] = { price, sources: [{ source: SOURCE, price, at }] };
        }
      }
    }
    const table: PriceTable = { ...current, at: row?.now ?? new Date(), basis, lastKnown };
    return table;
  };

  return {
    async prices() {
      if (cache && cache.until > Date.now()) return cache.table;
      const table = await read();
      cache = { table, until: Date.now() + CACHE_MS };
      return table;
    },
    async step() {
      await inTransaction(pool, async (client) => {
        await client.query(`INSERT INTO app_setting (key, value) VALUES ($1, '{}'::jsonb) ON CONFLICT (key) DO NOTHING`, [SETTING]);
        const locked = await client.query<{ value: { prices?: Record<string, string> } }>(
          'SELECT value FROM app_setting WHERE key = $1 FOR UPDATE SKIP LOCKED',
          [SETTING],
        );
        const row = locked.rows[0];
        if (!row) return;
        const current: Record<string, bigint> = {};
        for (const [asset, value] of Object.entries(row.value.prices ?? {})) if (/^\d+$/.test(value)) current[asset] = BigInt(value);
        const next = walk(current);
        const prices = Object.fromEntries(Object.entries(next).map(([k, v]) => [k, v.toString()]));
        await client.query('UPDATE app_setting SET value = value || $2::jsonb, updated_at = now() WHERE key = $1', [SETTING, { prices }]);
      });
      cache = undefined;
    },
  };
}
