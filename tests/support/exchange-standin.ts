/**
 * A stand-in for five exchanges' REST APIs (binance, kraken, okx, bybit, coinbase) on one local port, so real ccxt
 * clients can be pointed at it: each exchange under a path prefix (`http://127.0.0.1:PORT/binance/api/v3/...`),
 * answering exactly the requests ccxt makes to load spot markets and read tickers, in each exchange's response
 * shape, from answers stored in tests/fixtures/exchanges/<exchange>/ (trimmed to the markets we price; the
 * numbers are illustrative, the field sets are the real ones). Requests it does not know get a 404 and are listed
 * in `unhandled`.
 *
 * Scenarios: a price per source and asset, a stale ticker time (where the exchange sends one: binance closeTime,
 * okx ts, bybit's answer time; kraken's and coinbase's tickers carry no time), a source down (503 or the connection
 * reset) and a count of requests per source. Binance also takes signed market orders (POST /api/v3/order), checking
 * the API key and the HMAC-SHA256 signature as Binance does, and answers with a FULL order response.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { formatUnits, parseDecimal } from '../../src/lib/amount.ts';

export const EXCHANGES = ['binance', 'kraken', 'okx', 'bybit', 'coinbase'] as const;
export type ExchangeId = (typeof EXCHANGES)[number];

/** The market each exchange's ticker is read from per asset (USDT quote first, else USD; USDT from USDT/USD only). */
export const MARKET_IDS: Readonly<Record<ExchangeId, Readonly<Record<string, string>>>> = {
  binance: { BTC: 'BTCUSDT', ETH: 'ETHUSDT', LTC: 'LTCUSDT', DOGE: 'DOGEUSDT', TON: 'TONUSDT', TRX: 'TRXUSDT', USDC: 'USDCUSDT' },
  kraken: { BTC: 'XBTUSDT', ETH: 'ETHUSDT', LTC: 'LTCUSDT', DOGE: 'XDGUSDT', TON: 'TONUSD', TRX: 'TRXUSD', USDT: 'USDTZUSD', USDC: 'USDCUSDT' },
  okx: { BTC: 'BTC-USDT', ETH: 'ETH-USDT', LTC: 'LTC-USDT', DOGE: 'DOGE-USDT', TON: 'TON-USDT', TRX: 'TRX-USDT', USDC: 'USDC-USDT' },
  bybit: { BTC: 'BTCUSDT', ETH: 'ETHUSDT', LTC: 'LTCUSDT', DOGE: 'DOGEUSDT', TON: 'TONUSDT', TRX: 'TRXUSDT', USDC: 'USDCUSDT' },
  coinbase: { BTC: 'BTC-USDT', ETH: 'ETH-USDT', LTC: 'LTC-USD', DOGE: 'DOGE-USD', USDT: 'USDT-USD' },
};

export type Quote = { bid?: string; ask?: string; last?: string };

/** An order the binance stand-in accepted, as it was sent. */
export type StandInOrder = {
  symbol: string;
  side: string;
  type: string;
  quantity: string;
  newClientOrderId: string | undefined;
  newOrderRespType: string | undefined;
  orderId: number;
};

export type ExchangeStandIn = {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The base URL per exchange, for createExchangePrices' `urls`. */
  urls: Record<ExchangeId, string>;
  /** Sets an asset's ticker on a source: one price as bid, ask and last, or each side. */
  setPrice(source: ExchangeId, asset: string, price: string | Quote): void;
  /** Makes a source's ticker times `at` (undefined: the time of the request again). */
  setStale(source: ExchangeId, at: Date | undefined): void;
  /** 'unavailable': every request gets a 503; 'reset': the connection is destroyed; false: up again. */
  setDown(source: ExchangeId, mode: 'unavailable' | 'reset' | false): void;
  /** Requests a source received (down or not). */
  requests(source: ExchangeId): number;
  /** Every request: source, method and path with query. */
  log: Array<{ source: string; method: string; path: string }>;
  /** Requests no route answered. */
  unhandled: string[];
  /** Market orders binance accepted. */
  orders: StandInOrder[];
  /** Signed order requests binance refused, with the error code it answered. */
  refused: Array<{ code: number; msg: string }>;
  close(): Promise<void>;
};

const FIXTURES = new URL('../fixtures/exchanges/', import.meta.url);
const fixture = (exchange: ExchangeId, name: string): unknown => JSON.parse(readFileSync(new URL(`${exchange}/${name}`, FIXTURES), 'utf8'));

type Json = Record<string, unknown>;
type Request = { method: string; path: string; query: URLSearchParams; rawQuery: string; body: string; headers: IncomingMessage['headers'] };
type Reply = { status: number; body: unknown };
const ok = (body: unknown): Reply => ({ status: 200, body });

/** Binance pads its decimals to 8 places. */
const pad8 = (value: string) => {
  const [whole, fraction = ''] = value.split('.');
  return `${whole}.${fraction.padEnd(8, '0')}`;
};

export async function startExchangeStandIn(options: { binance?: { apiKey: string; secret: string } } = {}): Promise<ExchangeStandIn> {
  const quotes = new Map<string, Quote>();
  const stale = new Map<ExchangeId, Date>();
  const down = new Map<ExchangeId, 'unavailable' | 'reset'>();
  const counts = new Map<ExchangeId, number>();
  const log: ExchangeStandIn['log'] = [];
  const unhandled: string[] = [];
  const orders: StandInOrder[] = [];
  const refused: ExchangeStandIn['refused'] = [];
  let nextOrderId = 28457295010;

  const quoteOf = (exchange: ExchangeId, marketId: string) => quotes.get(`${exchange}:${marketId}`) ?? {};
  const timeOf = (exchange: ExchangeId) => stale.get(exchange)?.getTime() ?? Date.now();

  // binance ------------------------------------------------------------------------------------------------------
  const binanceInfo = fixture('binance', 'exchange-info.json') as Json & { symbols: Json[] };
  const binanceTickers = fixture('binance', 'ticker-24hr.json') as Json[];
  const binanceOrder = fixture('binance', 'order-full.json') as Json & { fills: Json[] };
  const binanceTicker = (ticker: Json): Json => {
    const q = quoteOf('binance', String(ticker['symbol']));
    const closeTime = timeOf('binance');
    return {
      ...ticker,
      ...(q.bid !== undefined ? { bidPrice: pad8(q.bid) } : {}),
      ...(q.ask !== undefined ? { askPrice: pad8(q.ask) } : {}),
      ...(q.last !== undefined ? { lastPrice: pad8(q.last) } : {}),
      openTime: closeTime - 86_400_000,
      closeTime,
    };
  };
  const binanceError = (status: number, code: number, msg: string): Reply => ({ status, body: { code, msg } });

  /** Binance's signed-endpoint checks: API key header, HMAC-SHA256 (hex) of query string + body, timestamp window. */
  const binanceSigned = (req: Request): Reply | URLSearchParams => {
    const keys = options.binance;
    if (!keys || req.headers['x-mbx-apikey'] !== keys.apiKey) return binanceError(401, -2015, 'Invalid API-key, IP, or permissions for action.');
    const strip = (raw: string) => {
      const parts = raw ? raw.split('&') : [];
      const signature = parts.find((p) => p.startsWith('signature='))?.slice('signature='.length);
      return { rest: parts.filter((p) => !p.startsWith('signature=')).join('&'), signature };
    };
    const query = strip(req.rawQuery);
    const body = strip(req.body);
    const signature = query.signature ?? body.signature;
    // totalParams: the query string concatenated with the body, as Binance's signed-endpoint docs define it.
    const expected = createHmac('sha256', keys.secret).update(query.rest + body.rest).digest('hex');
    const given = Buffer.from(signature ?? '', 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected, 'utf8'))) {
      return binanceError(400, -1022, 'Signature for this request is not valid.');
    }
    const params = new URLSearchParams(`${query.rest}&${body.rest}`);
    const timestamp = Number(params.get('timestamp'));
    const recvWindow = Number(params.get('recvWindow') ?? 5000);
    const now = Date.now();
    if (!Number.isFinite(timestamp) || timestamp >= now + 1000 || now - timestamp > recvWindow) {
      return binanceError(400, -1021, 'Timestamp for this request is outside of the recvWindow.');
    }
    return params;
  };

  const binanceNewOrder = (req: Request): Reply => {
    const checked = binanceSigned(req);
    if (!(checked instanceof URLSearchParams)) {
      const error = checked.body as { code: number; msg: string };
      refused.push({ code: error.code, msg: error.msg });
      return checked;
    }
    const params = checked;
    const symbol = params.get('symbol') ?? '';
    const market = binanceInfo.symbols.find((s) => s['symbol'] === symbol);
    if (!market) return binanceError(400, -1121, 'Invalid symbol.');
    const side = params.get('side') ?? '';
    const type = params.get('type') ?? '';
    const quantity = params.get('quantity') ?? '';
    if (side !== 'BUY' && side !== 'SELL') return binanceError(400, -1102, "Mandatory parameter 'side' was not sent, was empty/null, or malformed.");
    if (type !== 'MARKET') return binanceError(400, -1116, 'Invalid orderType.');
    if (!/^\d+(\.\d+)?$/.test(quantity)) return binanceError(400, -1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.");
    const lot = (market['filters'] as Json[]).find((f) => f['filterType'] === 'LOT_SIZE') ?? {};
    const qty = parseDecimal(quantity, 8);
    const step = parseDecimal(String(lot['stepSize']), 8);
    if (qty < parseDecimal(String(lot['minQty']), 8) || (step > 0n && qty % step !== 0n)) return binanceError(400, -1013, 'Filter failure: LOT_SIZE');

    const ticker = binanceTickers.map(binanceTicker).find((t) => t['symbol'] === symbol) ?? {};
    // A market buy takes the ask, a sell the bid; the whole quantity fills at once.
    const price = parseDecimal(String(side === 'BUY' ? ticker['askPrice'] : ticker['bidPrice']), 8);
    const quoteQty = (qty * price) / 10n ** 8n;
    // The 0.1% commission is charged in what the order receives: the base asset for a buy, the quote for a sell.
    const commission = side === 'BUY' ? qty / 1000n : quoteQty / 1000n;
    const orderId = nextOrderId++;
    const clientOrderId = params.get('newClientOrderId') ?? `web_${orderId.toString(16)}`;
    orders.push({ symbol, side, type, quantity, newClientOrderId: params.get('newClientOrderId') ?? undefined, newOrderRespType: params.get('newOrderRespType') ?? undefined, orderId });
    const now = Date.now();
    const full: Json = {
      ...binanceOrder,
      symbol,
      orderId,
      clientOrderId,
      transactTime: now,
      workingTime: now,
      side,
      type,
      origQty: pad8(quantity),
      executedQty: pad8(quantity),
      cummulativeQuoteQty: pad8(formatUnits(quoteQty, 8)),
      fills: [
        {
          ...binanceOrder.fills[0],
          price: pad8(formatUnits(price, 8)),
          qty: pad8(quantity),
          commission: pad8(formatUnits(commission, 8)),
          commissionAsset: side === 'BUY' ? market['baseAsset'] : market['quoteAsset'],
          tradeId: orderId * 2,
        },
      ],
    };
    const respType = params.get('newOrderRespType') ?? 'FULL';
    if (respType === 'ACK') return ok({ symbol, orderId, orderListId: -1, clientOrderId, transactTime: now });
    if (respType === 'RESULT') return ok(Object.fromEntries(Object.entries(full).filter(([k]) => k !== 'fills')));
    return ok(full);
  };

  const binance = (req: Request): Reply | undefined => {
    if (req.method === 'GET' && req.path === '/api/v3/ping') return ok({});
    if (req.method === 'GET' && req.path === '/api/v3/time') return ok({ serverTime: Date.now() });
    if (req.method === 'GET' && req.path === '/api/v3/exchangeInfo') return ok({ ...binanceInfo, serverTime: Date.now() });
    if (req.method === 'GET' && req.path === '/api/v3/ticker/24hr') {
      const all = binanceTickers.map(binanceTicker);
      const one = req.query.get('symbol');
      const many = req.query.get('symbols');
      if (one !== null) return all.find((t) => t['symbol'] === one) ? ok(all.find((t) => t['symbol'] === one)) : binanceError(400, -1121, 'Invalid symbol.');
      if (many === null) return ok(all);
      const wanted: unknown = JSON.parse(many);
      if (!Array.isArray(wanted) || wanted.some((s) => !all.some((t) => t['symbol'] === s))) return binanceError(400, -1121, 'Invalid symbol.');
      return ok(all.filter((t) => wanted.includes(t['symbol'])));
    }
    if (req.method === 'POST' && req.path === '/api/v3/order') return binanceNewOrder(req);
    return undefined;
  };

  // kraken -------------------------------------------------------------------------------------------------------
  const krakenAssets = fixture('kraken', 'assets.json');
  const krakenPairs = fixture('kraken', 'asset-pairs.json');
  const krakenTickers = (fixture('kraken', 'ticker.json') as { result: Record<string, Json> }).result;
  const krakenTicker = (pair: string, ticker: Json): Json => {
    const q = quoteOf('kraken', pair);
    const a = ticker['a'] as string[];
    const b = ticker['b'] as string[];
    const c = ticker['c'] as string[];
    return { ...ticker, a: [q.ask ?? a[0], ...a.slice(1)], b: [q.bid ?? b[0], ...b.slice(1)], c: [q.last ?? c[0], ...c.slice(1)] };
  };
  const kraken = (req: Request): Reply | undefined => {
    if (req.method !== 'GET') return undefined;
    if (req.path === '/0/public/Time') {
      const now = Math.floor(Date.now() / 1000);
      return ok({ error: [], result: { unixtime: now, rfc1123: new Date(now * 1000).toUTCString() } });
    }
    if (req.path === '/0/public/Assets') return ok(krakenAssets);
    if (req.path === '/0/public/AssetPairs') return ok(krakenPairs);
    if (req.path === '/0/public/Ticker') {
      const pairs = (req.query.get('pair') ?? Object.keys(krakenTickers).join(',')).split(',');
      const result: Record<string, Json> = {};
      for (const pair of pairs) {
        const ticker = krakenTickers[pair];
        // Kraken answers errors with HTTP 200 and a non-empty `error` list.
        if (!ticker) return ok({ error: ['EQuery:Unknown asset pair'] });
        result[pair] = krakenTicker(pair, ticker);
      }
      return ok({ error: [], result });
    }
    return undefined;
  };

  // okx ----------------------------------------------------------------------------------------------------------
  const okxInstruments = fixture('okx', 'instruments-spot.json');
  const okxTickers = (fixture('okx', 'tickers-spot.json') as { data: Json[] }).data;
  const okxTicker = (ticker: Json): Json => {
    const q = quoteOf('okx', String(ticker['instId']));
    return { ...ticker, bidPx: q.bid ?? ticker['bidPx'], askPx: q.ask ?? ticker['askPx'], last: q.last ?? ticker['last'], ts: String(timeOf('okx')) };
  };
  const okx = (req: Request): Reply | undefined => {
    if (req.method !== 'GET') return undefined;
    if (req.path === '/api/v5/public/time') return ok({ code: '0', msg: '', data: [{ ts: String(Date.now()) }] });
    if (req.path === '/api/v5/public/instruments') {
      if (req.query.get('instType') === 'SPOT') return ok(okxInstruments);
      // Only spot instruments are recorded: other types answer as an empty list.
      return ok({ code: '0', msg: '', data: [] });
    }
    if (req.path === '/api/v5/market/tickers' && req.query.get('instType') === 'SPOT') return ok({ code: '0', msg: '', data: okxTickers.map(okxTicker) });
    if (req.path === '/api/v5/market/ticker') {
      const ticker = okxTickers.find((t) => t['instId'] === req.query.get('instId'));
      return ticker ? ok({ code: '0', msg: '', data: [okxTicker(ticker)] }) : ok({ code: '51001', msg: "Instrument ID doesn't exist.", data: [] });
    }
    return undefined;
  };

  // bybit --------------------------------------------------------------------------------------------------------
  const bybitInstruments = fixture('bybit', 'instruments-spot.json') as Json;
  const bybitTickers = fixture('bybit', 'tickers-spot.json') as Json & { result: { list: Json[] } };
  const bybitTicker = (ticker: Json): Json => {
    const q = quoteOf('bybit', String(ticker['symbol']));
    return { ...ticker, bid1Price: q.bid ?? ticker['bid1Price'], ask1Price: q.ask ?? ticker['ask1Price'], lastPrice: q.last ?? ticker['lastPrice'] };
  };
  const bybit = (req: Request): Reply | undefined => {
    if (req.method !== 'GET') return undefined;
    if (req.path === '/v5/market/time') {
      const now = Date.now();
      return ok({ retCode: 0, retMsg: 'OK', result: { timeSecond: String(Math.floor(now / 1000)), timeNano: `${now}000000` }, retExtInfo: {}, time: now });
    }
    if (req.path === '/v5/market/instruments-info') {
      if (req.query.get('category') === 'spot') return ok({ ...bybitInstruments, time: Date.now() });
      return ok({ retCode: 0, retMsg: 'OK', result: { category: req.query.get('category'), list: [], nextPageCursor: '' }, retExtInfo: {}, time: Date.now() });
    }
    if (req.path === '/v5/market/tickers' && req.query.get('category') === 'spot') {
      const symbol = req.query.get('symbol');
      const list = bybitTickers.result.list.filter((t) => symbol === null || t['symbol'] === symbol).map(bybitTicker);
      if (symbol !== null && list.length === 0) return ok({ retCode: 10001, retMsg: 'Not supported symbols', result: {}, retExtInfo: {}, time: Date.now() });
      return ok({ ...bybitTickers, result: { category: 'spot', list }, time: timeOf('bybit') });
    }
    return undefined;
  };

  // coinbase -----------------------------------------------------------------------------------------------------
  const coinbaseFiat = fixture('coinbase', 'currencies.json');
  const coinbaseCrypto = fixture('coinbase', 'currencies-crypto.json');
  const coinbaseRates = fixture('coinbase', 'exchange-rates.json');
  const coinbaseProducts = (fixture('coinbase', 'products-spot.json') as { products: Json[] }).products;
  const coinbaseProduct = (product: Json): Json => {
    const q = quoteOf('coinbase', String(product['product_id']));
    return { ...product, price: q.last ?? q.bid ?? product['price'] };
  };
  const coinbase = (req: Request): Reply | undefined => {
    if (req.method !== 'GET') return undefined;
    if (req.path === '/v2/currencies') return ok(coinbaseFiat);
    if (req.path === '/v2/currencies/crypto') return ok(coinbaseCrypto);
    if (req.path === '/v2/exchange-rates') return ok(coinbaseRates);
    if (req.path === '/api/v3/brokerage/time') {
      const now = new Date();
      return ok({ iso: now.toISOString(), epochSeconds: String(Math.floor(now.getTime() / 1000)), epochMillis: String(now.getTime()) });
    }
    if (req.path === '/api/v3/brokerage/market/products') {
      // Only spot products are recorded: FUTURE products (ccxt asks for them too) answer as an empty list.
      if (req.query.get('product_type') === 'FUTURE') return ok({ products: [], num_products: 0 });
      const ids = req.query.getAll('product_ids');
      const products = coinbaseProducts.filter((p) => ids.length === 0 || ids.includes(String(p['product_id']))).map(coinbaseProduct);
      return ok({ products, num_products: products.length });
    }
    return undefined;
  };

  const routes: Record<ExchangeId, (req: Request) => Reply | undefined> = { binance, kraken, okx, bybit, coinbase };

  const handle = (source: ExchangeId, req: IncomingMessage, res: ServerResponse, path: string, body: string) => {
    const [pathname = '', rawQuery = ''] = path.split(/\?(.*)/s);
    const reply = routes[source]({ method: req.method ?? 'GET', path: pathname, query: new URLSearchParams(rawQuery), rawQuery, body, headers: req.headers });
    if (!reply) {
      unhandled.push(`${source} ${req.method} ${path}`);
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not recorded' }));
      return;
    }
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const match = /^\/([a-z]+)(\/.*)$/.exec(req.url ?? '');
      const source = EXCHANGES.find((id) => id === match?.[1]);
      if (!match || !source) {
        unhandled.push(`? ${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      const path = match[2] ?? '/';
      counts.set(source, (counts.get(source) ?? 0) + 1);
      log.push({ source, method: req.method ?? 'GET', path });
      const mode = down.get(source);
      if (mode === 'reset') {
        req.socket.destroy();
        return;
      }
      if (mode === 'unavailable') {
        res.writeHead(503, { 'content-type': 'text/html' }).end('<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>');
        return;
      }
      try {
        handle(source, req, res, path, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        unhandled.push(`${source} ${req.method} ${path}: ${String(error)}`);
        res.writeHead(500).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    urls: Object.fromEntries(EXCHANGES.map((id) => [id, `${url}/${id}`])) as Record<ExchangeId, string>,
    setPrice(source, asset, price) {
      const marketId = MARKET_IDS[source][asset];
      if (!marketId) throw new Error(`${source} has no market for ${asset} in the stand-in`);
      quotes.set(`${source}:${marketId}`, typeof price === 'string' ? { bid: price, ask: price, last: price } : price);
    },
    setStale(source, at) {
      if (at) stale.set(source, at);
      else stale.delete(source);
    },
    setDown(source, mode) {
      if (mode) down.set(source, mode);
      else down.delete(source);
    },
    requests: (source) => counts.get(source) ?? 0,
    log,
    unhandled,
    orders,
    refused,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // ccxt keeps its sockets alive; they would hold close() for a minute.
        server.closeAllConnections();
      }),
  };
}
