/**
 * Crypto prices from real exchanges through ccxt, one client per exchange, and a hedge client placing market orders
 * on one exchange. No exchange is spoken to by hand: ccxt builds every request and parses every answer.
 *
 * Markets. Each client loads its markets once, spot only (see SPOT_ONLY). For each asset the market is `ASSET/USDT`
 * when the exchange lists it (the deepest books), else `ASSET/USD`. A quote in USDT is taken as USD: the USDT price
 * itself is measured separately, from a `USDT/USD` market where an exchange has one (kraken, coinbase); an exchange
 * without one gives no USDT price (no inversion of USDC/USDT: that would measure USDT in USDC, not in USD). An asset
 * an exchange does not list is simply absent from its prices.
 *
 * Exactness. ccxt parses prices into JS numbers. The mid is computed from the exchange's own decimal strings (read
 * from `ticker.info`, see RAW_TICKER) when they are there and agree with ccxt's number, otherwise from the number's
 * shortest round-trip string (`Number#toString`, which gives back the exchange's decimal for up to 15 significant
 * digits); never by float arithmetic. mid = (bid + ask) / 2 rounded half-up to PRICE_DECIMALS; a ticker without
 * bid and ask gives its last price (coinbase's product list carries only the last price).
 *
 * Failures. Every source is polled on its own: a source that fails (HTTP error, timeout, malformed answer) is
 * named in `errors` and never fails the others.
 */
import type { Exchange, MarketInterface, Order, Ticker } from 'ccxt';
import { PRICE_DECIMALS } from './port.ts';

export type SourcePrice = {
  /** The ccxt exchange id: binance, kraken, okx, bybit, coinbase... */
  source: string;
  asset: string;
  /** USD per one unit of `asset`, scaled by PRICE_SCALE (a USDT quote counted as USD). */
  mid: bigint;
  /** The quote currency of the market read: 'USDT' or 'USD'. */
  quote: string;
  /** The exchange's ticker timestamp; the time we received the answer when the exchange sends none. */
  at: Date;
};

export type PollResult = { prices: SourcePrice[]; errors: Array<{ source: string; error: string }> };

export type ExchangePrices = {
  poll(): Promise<PollResult>;
  close(): Promise<void>;
};

/**
 * ccxt options that keep loadMarkets on spot endpoints. binance, okx and bybit load futures, swaps and options by
 * default (fapi/dapi, instType=SWAP..., category=linear...). kraken's REST API is spot only (its futures are the
 * separate `krakenfutures`). coinbase has no such option: its fetchMarketsV3 also asks for FUTURE products, and
 * ccxt drops those two requests' failures.
 */
const SPOT_ONLY: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  // fetchCurrencies off: with keys (the hedge) binance would call the signed sapi capital/config/getall first.
  binance: { defaultType: 'spot', fetchMarkets: { types: ['spot'] }, fetchMargins: false, fetchCurrencies: false },
  okx: { defaultType: 'spot', fetchMarkets: { types: ['spot'] } },
  bybit: { defaultType: 'spot', fetchMarkets: { types: ['spot'] } },
};

/** Where each exchange's ticker keeps the decimal strings ccxt parsed bid, ask and last from. */
const RAW_TICKER: Readonly<Record<string, (info: unknown) => { bid?: string; ask?: string; last?: string }>> = {
  binance: (info) => ({ bid: field(info, 'bidPrice'), ask: field(info, 'askPrice'), last: field(info, 'lastPrice') }),
  okx: (info) => ({ bid: field(info, 'bidPx'), ask: field(info, 'askPx'), last: field(info, 'last') }),
  bybit: (info) => ({ bid: field(info, 'bid1Price'), ask: field(info, 'ask1Price'), last: field(info, 'lastPrice') }),
  // Kraken: b = [price, whole lot volume, lot volume], likewise a; c = [price, lot volume].
  kraken: (info) => ({ bid: firstOf(info, 'b'), ask: firstOf(info, 'a'), last: firstOf(info, 'c') }),
  coinbase: (info) => ({ last: field(info, 'price') }),
};

/**
 * The createOrder parameter carrying our client order id, by the exchange's own name where ccxt reads it (or, for
 * coinbase, where ccxt would otherwise send its own uuid and drop the unified one); bybit and kraken take ccxt's
 * unified `clientOrderId` (to orderLinkId, cl_ord_id).
 */
const CLIENT_ORDER_ID: Readonly<Record<string, string>> = {
  binance: 'newClientOrderId',
  okx: 'clOrdId',
  coinbase: 'client_order_id',
};

const DEFAULT_TIMEOUT_MS = 10_000;
const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

export function createExchangePrices(options: {
  sources: readonly string[];
  assets: readonly string[];
  urls?: Readonly<Record<string, string>>;
  timeoutMs?: number;
}): ExchangePrices {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const states = options.sources.map((id) => new SourceState(id, () => createClient(id, { url: options.urls?.[id], timeoutMs })));

  const pollOne = async (state: SourceState): Promise<PollResult> => {
    const client = await state.client();
    const symbols = await state.symbols(options.assets);
    const wanted = [...symbols.values()].map((m) => m.symbol);
    if (wanted.length === 0) return { prices: [], errors: [] };
    const tickers = await fetchTickers(client, wanted);
    const receivedAt = new Date();
    const prices: SourcePrice[] = [];
    const errors: PollResult['errors'] = [];
    for (const [asset, market] of symbols) {
      const ticker = tickers[market.symbol];
      const mid = ticker ? midOf(client.id, ticker) : undefined;
      if (mid === undefined) {
        errors.push({ source: state.id, error: `${market.symbol}: ${ticker ? 'no bid, ask or last price' : 'no ticker in the answer'}` });
        continue;
      }
      const at = typeof ticker?.timestamp === 'number' && Number.isFinite(ticker.timestamp) ? new Date(ticker.timestamp) : receivedAt;
      prices.push({ source: state.id, asset, mid, quote: market.quote, at });
    }
    return { prices, errors };
  };

  return {
    async poll() {
      const results = await Promise.allSettled(states.map((state) => pollOne(state)));
      const prices: SourcePrice[] = [];
      const errors: PollResult['errors'] = [];
      results.forEach((result, i) => {
        if (result.status === 'fulfilled') {
          prices.push(...result.value.prices);
          errors.push(...result.value.errors);
        } else {
          errors.push({ source: states[i]?.id ?? '?', error: describe(result.reason) });
        }
      });
      return { prices, errors };
    },
    async close() {
      await Promise.all(states.map((state) => state.close()));
    },
  };
}

/** One exchange's client, created on first use, and the markets chosen for our assets once its markets loaded. */
class SourceState {
  readonly id: string;
  private readonly create: () => Promise<Exchange>;
  private created: Promise<Exchange> | undefined;
  private markets: Readonly<Record<string, MarketInterface | undefined>> | undefined;
  private loadTried = false;

  constructor(id: string, create: () => Promise<Exchange>) {
    this.id = id;
    this.create = create;
  }

  client(): Promise<Exchange> {
    if (!this.created) {
      const created = this.create();
      // A failed creation (unknown id) is tried again on the next poll rather than kept.
      created.catch(() => {
        if (this.created === created) this.created = undefined;
      });
      this.created = created;
    }
    return this.created;
  }

  /** The market of each asset the exchange lists; the markets are loaded once (a hedge asks for one asset at a time). */
  async symbols(assets: readonly string[]): Promise<Map<string, MarketInterface>> {
    if (!this.markets) {
      const client = await this.client();
      // ccxt keeps a failed loadMarkets promise and hands it out again unless asked to reload.
      const reload = this.loadTried;
      this.loadTried = true;
      this.markets = await client.loadMarkets(reload);
    }
    const chosen = new Map<string, MarketInterface>();
    for (const asset of assets) {
      const market = pickMarket(this.markets, asset);
      if (market) chosen.set(asset, market);
    }
    return chosen;
  }

  async close(): Promise<void> {
    const created = this.created;
    this.created = undefined;
    if (!created) return;
    const client = await created.catch(() => undefined);
    if (client) await closeClient(client);
  }
}

/** The market priced for an asset: ASSET/USDT, else ASSET/USD; USDT itself only from USDT/USD. Spot and active only. */
function pickMarket(markets: Readonly<Record<string, MarketInterface | undefined>>, asset: string): MarketInterface | undefined {
  const candidates = asset === 'USDT' ? ['USDT/USD'] : [`${asset}/USDT`, `${asset}/USD`];
  for (const symbol of candidates) {
    const market = markets[symbol];
    if (market && market.spot === true && market.active !== false) return market;
  }
  return undefined;
}

/** All wanted tickers in one request where the exchange has a multi-ticker endpoint, else one request per symbol. */
async function fetchTickers(client: Exchange, symbols: string[]): Promise<Record<string, Ticker | undefined>> {
  if (client.has['fetchTickers'] === true) return client.fetchTickers(symbols);
  const tickers = await Promise.all(symbols.map((symbol) => client.fetchTicker(symbol)));
  return Object.fromEntries(tickers.map((ticker, i) => [symbols[i], ticker]));
}

/** The ticker's mid (or last) in PRICE_SCALE units, from exact decimals; undefined when it has no usable price. */
function midOf(exchangeId: string, ticker: Ticker): bigint | undefined {
  const raw = RAW_TICKER[exchangeId]?.(ticker.info) ?? {};
  const bid = exactDecimal(ticker.bid, raw.bid);
  const ask = exactDecimal(ticker.ask, raw.ask);
  if (bid !== undefined && ask !== undefined) return scaleHalfUp(addDecimals(bid, ask), 2n);
  const last = exactDecimal(ticker.last, raw.last);
  return last === undefined ? undefined : scaleHalfUp(parseExact(last), 1n);
}

/** A positive ccxt number as an exact decimal string: the exchange's own string when it says the same number. */
function exactDecimal(value: number | undefined, raw: string | undefined): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return undefined;
  if (raw !== undefined && DECIMAL.test(raw) && Number(raw) === value) return raw;
  return numberToDecimal(value);
}

/**
 * A JS number as the decimal string it round-trips from (shortest representation), exponent notation expanded:
 * 1e-7 → "0.0000001". The one place a float becomes a decimal; no arithmetic is done on the float.
 */
export function numberToDecimal(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`Not a finite number: ${value}`);
  const text = value.toString();
  const match = /^(-)?(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponentText);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

type Exact = { units: bigint; scale: number };

function parseExact(text: string): Exact {
  const match = DECIMAL.exec(text);
  if (!match) throw new Error(`Not a decimal number: ${JSON.stringify(text)}`);
  const [, sign, whole = '0', fraction = ''] = match;
  const units = BigInt(whole + fraction);
  return { units: sign ? -units : units, scale: fraction.length };
}

function addDecimals(a: string, b: string): Exact {
  const x = parseExact(a);
  const y = parseExact(b);
  const scale = Math.max(x.scale, y.scale);
  return { units: x.units * 10n ** BigInt(scale - x.scale) + y.units * 10n ** BigInt(scale - y.scale), scale };
}

/** value / divisor in PRICE_DECIMALS units, rounded half-up (values here are positive). */
function scaleHalfUp(value: Exact, divisor: bigint): bigint {
  const numerator = value.units * 10n ** BigInt(PRICE_DECIMALS);
  const denominator = divisor * 10n ** BigInt(value.scale);
  const quotient = numerator / denominator;
  return (numerator % denominator) * 2n >= denominator ? quotient + 1n : quotient;
}

function formatExact(value: Exact): string {
  const negative = value.units < 0n;
  const digits = (negative ? -value.units : value.units).toString().padStart(value.scale + 1, '0');
  const whole = digits.slice(0, digits.length - value.scale);
  const fraction = digits.slice(digits.length - value.scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

function field(info: unknown, key: string): string | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const value: unknown = (info as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function firstOf(info: unknown, key: string): string | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const list: unknown = (info as Record<string, unknown>)[key];
  const first: unknown = Array.isArray(list) ? list[0] : undefined;
  return typeof first === 'string' ? first : undefined;
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
  // ccxt messages carry the whole response body; an HTML error page would flood the log.
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * Rewrites the origin (scheme and host) of every http(s) URL string in ccxt's `urls.api`, a nested object, to
 * `base`, keeping each path: `https://api.binance.com/api/v3` with base `http://proxy/binance` becomes
 * `http://proxy/binance/api/v3`. Host templates such as okx's `https://{hostname}` are rewritten too.
 */
export function rewriteApiUrls<T>(api: T, base: string): T {
  const origin = new URL(base).toString().replace(/\/+$/, '');
  const rewrite = (value: unknown): unknown => {
    if (typeof value === 'string') return value.replace(/^https?:\/\/[^/]+/, origin);
    if (Array.isArray(value)) return value.map(rewrite);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]));
    return value;
  };
  return rewrite(api) as T;
}

async function createClient(
  id: string,
  options: { url?: string; timeoutMs: number; credentials?: { apiKey: string; secret: string; password?: string } },
): Promise<Exchange> {
  // ccxt is large (hundreds of exchanges): loaded only when a source is actually polled.
  const { exchanges } = await import('ccxt');
  const Client: unknown = Object.hasOwn(exchanges, id) ? (exchanges as Record<string, unknown>)[id] : undefined;
  if (typeof Client !== 'function') throw new Error(`Unknown ccxt exchange id: ${JSON.stringify(id)}`);
  const client = new (Client as new (config: Record<string, unknown>) => Exchange)({
    enableRateLimit: true,
    timeout: options.timeoutMs,
    options: SPOT_ONLY[id] ?? {},
    ...options.credentials,
  });
  if (options.url !== undefined) client.urls.api = rewriteApiUrls(client.urls.api, options.url);
  return client;
}

async function closeClient(client: Exchange): Promise<void> {
  await client.close();
  // ccxt's undici pool keeps sockets alive for a minute; close() leaves it open.
  const pool: unknown = Reflect.get(client, 'fetchDispatcher');
  if (typeof pool === 'object' && pool !== null && 'close' in pool && typeof pool.close === 'function') await (pool.close as () => Promise<void>).call(pool);
}

export type HedgeOrder = { orderId: string; price: string; filled: string; fee: string; feeCurrency: string };

export type HedgeExchange = {
  /** A market order for `amount` (a decimal of the base asset) of the asset's USDT (else USD) market. */
  marketOrder(input: { asset: string; side: 'buy' | 'sell'; amount: string; clientOrderId: string }): Promise<HedgeOrder>;
  close(): Promise<void>;
};

/**
 * Market orders on one exchange through ccxt's createOrder. Amounts stay decimal strings on our side; ccxt takes a
 * JS number, so the amount is converted right at the call, and refused when it has more digits than a double
 * carries (the number would not round-trip to the same decimal). The answer's numbers come back as decimals the
 * same way. A market buy is sized in base units, which ccxt does for binance, kraken, okx and bybit; coinbase
 * sizes market buys in the quote currency only.
 */
export function createHedgeExchange(options: {
  exchange: string;
  apiKey: string;
  secret: string;
  /** The API key's passphrase (okx). */
  password?: string;
  /** A base URL replacing the exchange's API hosts, as in createExchangePrices. */
  url?: string;
  timeoutMs?: number;
}): HedgeExchange {
  const credentials = { apiKey: options.apiKey, secret: options.secret, ...(options.password !== undefined ? { password: options.password } : {}) };
  // The hedge client carries keys: a client of its own, never shared with the price polling.
  const state = new SourceState(options.exchange, () =>
    createClient(options.exchange, { url: options.url, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, credentials }),
  );
  return {
    async marketOrder({ asset, side, amount, clientOrderId }) {
      // The one float of the hedge: ccxt's amount argument. Refused unless it is the same decimal as `amount`.
      const quantity = Number(amount);
      if (!DECIMAL.test(amount) || !(quantity > 0) || numberToDecimal(quantity) !== formatExact(parseExact(amount))) {
        throw new RangeError(`Amount ${JSON.stringify(amount)} is not a positive decimal a double carries exactly`);
      }
      const client = await state.client();
      const market = (await state.symbols([asset])).get(asset);
      if (!market) throw refused(new Error(`${options.exchange} lists no ${asset}/USDT or ${asset}/USD spot market`));
      const { NetworkError } = await import('ccxt');
      try {
        const order = await client.createOrder(market.symbol, 'market', side, quantity, undefined, {
          [CLIENT_ORDER_ID[client.id] ?? 'clientOrderId']: clientOrderId,
        });
        return hedgeOrder(order);
      } catch (error) {
        // A network error (a timeout, a reset) may have placed the order; any other is the exchange's refusal (port.ts).
        throw error instanceof NetworkError ? error : refused(error);
      }
    },
    close: () => state.close(),
  };
}

/** Marks an error as the exchange's no: nothing was traded (HedgePort's contract). */
function refused(error: unknown): Error {
  const marked = error instanceof Error ? error : new Error(String(error));
  return Object.assign(marked, { refused: true });
}

function hedgeOrder(order: Order): HedgeOrder {
  const price = order.average ?? order.price;
  // ccxt's orders also carry `fees` (one per currency and trade), which its Order type does not declare.
  const listed: unknown = Reflect.get(order, 'fees');
  const fees = (Array.isArray(listed) ? (listed as Order['fee'][]) : [order.fee]).filter(
    (fee): fee is NonNullable<Order['fee']> => fee !== undefined && typeof fee.cost === 'number',
  );
  // Fees are summed in the currency of the first one; an order charged in two currencies is not expected here.
  const feeCurrency = fees[0]?.currency ?? '';
  const fee = fees
    .filter((f) => f.currency === feeCurrency)
    .reduce((sum, f) => formatExact(addDecimals(sum, numberToDecimal(f.cost ?? 0))), '0');
  return {
    orderId: order.id ?? '',
    price: typeof price === 'number' ? numberToDecimal(price) : '0',
    filled: typeof order.filled === 'number' ? numberToDecimal(order.filled) : '0',
    fee,
    feeCurrency,
  };
}
