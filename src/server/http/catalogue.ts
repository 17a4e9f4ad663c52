/**
 * Public metadata and rates (SPEC §7 Meta; POST /rate, /fiat/rate/invert): no sign-in needed, the browser
 * loads them before anything else.
 *
 * POST /api/rate           { currencies?: string[], fiatCurrencies?: string[] } → { ratesMap: { [crypto]: { [fiat]: "decimal" } }, asOf: { [crypto]: ISO time } }
 *   A coin with no current price has its last known value in ratesMap, and the time of that value in `asOf`, while it
 *   is younger than RATES_LAST_KNOWN_MAX_AGE_SECONDS; after that it has none. Current values have no `asOf`.
 * POST /api/fiat/rate/invert { currencies?: string[], fiatCurrencies?: string[] } → { ratesMap: { [fiat]: { [crypto]: "decimal" } } }
 * Omitted lists mean every offered crypto currency and every fiat currency.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { Catalogue } from '../domain/catalogue.ts';
import { invertedRatesMap, lastKnownRates, ratesMap } from '../domain/rates.ts';
import type { RatesPort } from '../adapters/rates/port.ts';
import { DomainError } from '../domain/errors.ts';
import { readJsonBody } from './json-body.ts';
import type { ApiEnv } from './context.ts';

const code = z.string().trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');
const ratesBody = z
  .object({ currencies: z.array(code).max(100).optional(), fiatCurrencies: z.array(code).max(20).optional() })
  .default({});

export function createCatalogueApi(deps: { catalogue: Catalogue; rates: RatesPort; lastKnownMaxAgeMs: number }): Hono<ApiEnv> {
  const { catalogue, rates } = deps;
  const app = new Hono<ApiEnv>();
  const crypto = catalogue.coins;
  const fiat = catalogue.fiats;

  // SPEC §7: query results are kept 60 s; the catalogue changes only with a deployment.
  const cached = (c: { header: (name: string, value: string) => void }) => c.header('Cache-Control', 'public, max-age=60');

  app.get('/b2c-wallet/meta-info/currency', (c) => {
    cached(c);
    return c.json(crypto);
  });
  app.get('/b2c-wallet/meta-info/coin', (c) => {
    cached(c);
    return c.json({ fiat, crypto });
  });
  app.get('/fiat/metadata', (c) => {
    cached(c);
    return c.json(fiat);
  });

  const selection = async (body: unknown) => {
    const parsed = ratesBody.parse(body ?? {});
    const coins = parsed.currencies ? parsed.currencies.map((currency) => findOrRefuse(crypto, currency, 'crypto')) : crypto;
    const fiats = parsed.fiatCurrencies ? parsed.fiatCurrencies.map((currency) => findOrRefuse(fiat, currency, 'fiat').currency) : fiat.map((f) => f.currency);
    return { coins, fiats, table: await rates.prices() };
  };

  app.post('/rate', async (c) => {
    const { coins, fiats, table } = await selection(await readJsonBody(c.req.raw, { empty: {} }));
    const current = ratesMap(table, coins, fiats);
    const stale = lastKnownRates(table, coins, fiats, deps.lastKnownMaxAgeMs);
    for (const [currency, row] of Object.entries(stale.ratesMap)) current[currency] = { ...current[currency], ...row };
    return c.json({ ratesMap: current, asOf: stale.asOf });
  });
  app.post('/fiat/rate/invert', async (c) => {
    const { coins, fiats, table } = await selection(await readJsonBody(c.req.raw, { empty: {} }));
    return c.json({ ratesMap: invertedRatesMap(table, coins, fiats) });
  });
  return app;
}

function findOrRefuse<T extends { currency: string }>(list: readonly T[], currency: string, kind: string): T {
  const found = list.find((item) => item.currency === currency);
  if (!found) throw new DomainError('UNKNOWN_CURRENCY', `${currency} is not a ${kind} currency this wallet offers`);
  return found;
}

