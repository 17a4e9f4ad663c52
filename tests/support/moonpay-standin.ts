import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signMoonPayWebhook } from '../../src/server/adapters/onramp/moonpay.ts';

/**
 * MoonPay on loopback, for tests only (production never reaches it: MOONPAY_API_URL and MOONPAY_WIDGET_URL point
 * here only in a test's environment). It answers in MoonPay's documented shapes from the answers recorded in
 * tests/fixtures/moonpay: the currency list, limits, a buy quote (100 USD recorded; other amounts worked out with the
 * recorded quote's price and fees), the IP check, and transactions by external id, which a test creates as MoonPay
 * would when a buyer pays. Its widget page shows the signed link's parameters and leads back to `redirectURL`. It
 * signs webhooks as MoonPay does (Moonpay-Signature-V2) and sends them where a test says.
 */
export const STANDIN_KEYS = { apiKey: 'pk_test_walletstandin', secretKey: 'sk_test_walletstandinsecret', webhookKey: 'wk_test_walletstandinwebhook' } as const;

type Json = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/moonpay/${name}`, import.meta.url), 'utf8')) as unknown;

/** What a test sets of a MoonPay transaction; the rest comes from the recorded one. */
export type StandInTransaction = {
  externalTransactionId: string;
  status: 'pending' | 'waitingAuthorization' | 'waitingPayment' | 'completed' | 'failed';
  walletAddress: string;
  cryptoTransactionId?: string | null;
  quoteCurrencyAmount?: number;
  failureReason?: string | null;
  /** The code of the step that failed (stages[].failureReason), e.g. payment_authorization_declined. */
  stageFailure?: string;
};

export type MoonPayStandIn = Awaited<ReturnType<typeof startMoonPayStandIn>>;

export async function startMoonPayStandIn() {
  const currencies = fixture('currencies.json') as Json[];
  const quote100 = fixture('buy_quote-usdc-usd-100.json') as Json;
  const ip = fixture('ip_address.json') as Json;
  const recordedTransaction = fixture('transaction.json') as Json;
  const limits: Record<string, Json> = {
    usd: fixture('limits-usdc-usd-credit_debit_card.json') as Json,
    eur: fixture('limits-usdc-eur-credit_debit_card.json') as Json,
  };
  const transactions = new Map<string, Json[]>();
  const requests: { method: string; path: string; query: Record<string, string>; authorization: string | undefined }[] = [];
  const state = { mode: 'up' as 'up' | 'error' | 'silent', country: { alpha2: 'US', isAllowed: true, isBuyAllowed: true } };

  const send = (response: ServerResponse, status: number, body: unknown): void => void response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const refuse = (response: ServerResponse, status: number, type: string, message: string): void => send(response, status, { errors: [], message, type });

  /** The recorded quote's price and fees applied to another amount (MoonPay rounds the coins to its precision). */
  function quoteFor(query: Record<string, string>): Json {
    const price = Number(quote100.quoteCurrencyPrice);
    const fees = Number(quote100.feeAmount) + Number(quote100.networkFeeAmount);
    const base = query.baseCurrencyAmount !== undefined ? Number(query.baseCurrencyAmount) : undefined;
    const total = base ?? Math.ceil((Number(query.quoteCurrencyAmount) * price + fees) * 100) / 100;
    if (base === 100 && query.baseCurrencyCode === 'usd') return quote100;
    // Asked by the crypto amount, MoonPay answers that amount; by the fiat, what it buys (to its 5 decimals).
    const crypto = base === undefined ? Number(query.quoteCurrencyAmount) : Math.floor(((total - fees) / price) * 1e5) / 1e5;
    return { ...quote100, baseCurrencyCode: query.baseCurrencyCode, baseCurrencyAmount: Math.round((total - fees) * 100) / 100, quoteCurrencyAmount: crypto, totalAmount: total };
  }

  function route(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://standin');
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method: request.method ?? 'GET', path: url.pathname, query, authorization: request.headers.authorization });
    if (url.pathname === '/widget') {
      const back = query.redirectURL ?? '';
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(
        `<!doctype html><title>MoonPay stand-in</title><h1>MoonPay stand-in</h1><p data-testid="moonpay-amount">${escape(query.baseCurrencyAmount ?? '')} ${escape(query.baseCurrencyCode ?? '')}</p>` +
          `<p data-testid="moonpay-wallet">${escape(query.walletAddress ?? '')}</p><a data-testid="moonpay-back" href="${escape(back)}">Back to the wallet</a>`,
      );
      return;
    }
    if (state.mode === 'silent') return;
    if (state.mode === 'error') return refuse(response, 503, 'ServiceUnavailableError', 'Service temporarily unavailable');
    if (url.pathname.startsWith('/v1/transactions/ext/')) {
      if (request.headers.authorization !== `Api-Key ${STANDIN_KEYS.secretKey}`) return refuse(response, 401, 'UnauthorizedError', 'Invalid API key');
      const found = transactions.get(decodeURIComponent(url.pathname.slice('/v1/transactions/ext/'.length)));
      return found ? send(response, 200, found) : refuse(response, 404, 'NotFoundError', 'Transaction not found');
    }
    if (query.apiKey !== STANDIN_KEYS.apiKey) return refuse(response, 401, 'UnauthorizedError', 'Invalid API key');
    if (url.pathname === '/v3/currencies') return send(response, 200, currencies);
    if (url.pathname === '/v4/ip_address') return send(response, 200, { ...ip, ...state.country, ipAddress: query.ipAddress ?? ip.ipAddress });
    const match = /^\/v3\/currencies\/([a-z0-9_]+)\/(limits|buy_quote)$/.exec(url.pathname);
    if (!match || !currencies.some((c) => c.code === match[1] && c.type === 'crypto')) return refuse(response, 404, 'NotFoundError', 'Currency not found');
    const recorded = limits[query.baseCurrencyCode ?? ''];
    if (!recorded) return refuse(response, 400, 'BadRequestError', 'Invalid base currency code');
    if (match[2] === 'limits') return send(response, 200, { ...recorded, paymentMethod: query.paymentMethod ?? 'credit_debit_card' });
    const answer = quoteFor(query);
    const base = recorded.baseCurrency as { minBuyAmount: number; maxBuyAmount: number };
    const total = Number(answer.totalAmount);
    if (total < base.minBuyAmount || total > base.maxBuyAmount) return refuse(response, 400, 'BadRequestError', `Invalid amount: the total must be between ${base.minBuyAmount} and ${base.maxBuyAmount}`);
    return send(response, 200, { ...answer, paymentMethod: query.paymentMethod ?? 'credit_debit_card' });
  }

  const server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** The transaction as MoonPay now reports it, for the external id: created or moved on. */
  function transaction(set: StandInTransaction): Json {
    const previous = transactions.get(set.externalTransactionId)?.[0];
    const data: Json = {
      ...recordedTransaction,
      ...previous,
      id: (previous?.id as string | undefined) ?? crypto.randomUUID(),
      createdAt: (previous?.createdAt as string | undefined) ?? new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      externalTransactionId: set.externalTransactionId,
      status: set.status,
      walletAddress: set.walletAddress,
      cryptoTransactionId: set.cryptoTransactionId ?? null,
      failureReason: set.failureReason ?? null,
      ...(set.quoteCurrencyAmount === undefined ? {} : { quoteCurrencyAmount: set.quoteCurrencyAmount }),
      ...(set.stageFailure === undefined
        ? {}
        : {
            stages: [
              { stage: 'stage_one_ordering', status: 'success', actions: [], failureReason: null },
              { stage: 'stage_two_verification', status: 'success', actions: [], failureReason: null },
              { stage: 'stage_three_processing', status: 'failed', actions: [], failureReason: set.stageFailure },
              { stage: 'stage_four_delivery', status: 'not_started', actions: [], failureReason: null },
            ],
          }),
    };
    transactions.set(set.externalTransactionId, [data]);
    return data;
  }

  return {
    url,
    keys: STANDIN_KEYS,
    /** What MOONPAY_* a server needs to use this stand-in. */
    env: (overrides: Record<string, string> = {}) => ({
      CARD_PROVIDER: 'moonpay',
      MOONPAY_API_KEY: STANDIN_KEYS.apiKey,
      MOONPAY_SECRET_KEY: STANDIN_KEYS.secretKey,
      MOONPAY_WEBHOOK_KEY: STANDIN_KEYS.webhookKey,
      MOONPAY_API_URL: url,
      MOONPAY_WIDGET_URL: `${url}/widget`,
      ...overrides,
    }),
    requests,
    /** `error`: every API call answers 503; `silent`: none is answered at all. */
    setMode: (mode: 'up' | 'error' | 'silent') => void (state.mode = mode),
    setCountry: (alpha2: string, isBuyAllowed: boolean) => void (state.country = { alpha2, isAllowed: true, isBuyAllowed }),
    transaction,
    /** A webhook's body as MoonPay sends it: the event type and the transaction object. */
    webhookBody: (type: 'transaction_created' | 'transaction_updated' | 'transaction_failed', data: Json) => JSON.stringify({ data, type, externalCustomerId: data.externalCustomerId ?? null }),
    /** Signed with the webhook key (or `key`) at `timestampS`, as Moonpay-Signature-V2 carries it. */
    sign: (body: string, timestampS = Math.floor(Date.now() / 1000), key: string = STANDIN_KEYS.webhookKey) => signMoonPayWebhook(key, body, timestampS),
    /** POSTs a webhook to `target` as MoonPay does, signed now; `signature` replaces the header (null leaves it out). */
    async deliver(target: string, body: string, signature: string | null = signMoonPayWebhook(STANDIN_KEYS.webhookKey, body, Math.floor(Date.now() / 1000))) {
      const response = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'Moonpay-Signature-V2': signature }) }, body });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}
