/**
 * MoonPay as the on-ramp (./port.ts), over its public REST API and its widget:
 *   GET /v3/currencies                                   what it sells (crypto with network and contract) and takes (fiat)
 *   GET /v4/ip_address?ipAddress=                        the buyer's country and whether buying is allowed there
 *   GET /v3/currencies/{code}/limits                     a payment method's min and max in a fiat
 *   GET /v3/currencies/{code}/buy_quote                  an estimate for a fiat (or crypto) amount, fees included
 *   GET /v1/transactions/ext/{externalTransactionId}     its transactions started with our reference (secret key)
 * The widget link is signed with the secret key by the official SDK (@moonpay/moonpay-node); webhooks carry
 * `Moonpay-Signature-V2: t=<unix s>,s=<hex HMAC-SHA256 of "t.body" with the webhook key>`. Amounts are read as the
 * decimal text MoonPay wrote (JSON numbers never become doubles here). Every request has a deadline: a provider that
 * does not answer is unavailable, never a wait without end.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MoonPay } from '@moonpay/moonpay-node';
import { z } from 'zod';
import type { Network } from '../../../lib/currencies.ts';
import {
  ON_RAMP_STATUSES,
  OnRampRefusedError,
  OnRampUnavailableError,
  type OnRampCountry,
  type OnRampCrypto,
  type OnRampFiat,
  type OnRampLimits,
  type OnRampProvider,
  type OnRampQuote,
  type OnRampQuoteRequest,
  type OnRampTransaction,
  type OnRampWebhook,
  type OnRampWidgetRequest,
} from './port.ts';

export const MOONPAY_API_URL = 'https://api.moonpay.com';
export const MOONPAY_WIDGET_URL = 'https://buy.moonpay.com';
export const MOONPAY_SANDBOX_WIDGET_URL = 'https://buy-sandbox.moonpay.com';
export const MOONPAY_SIGNATURE_HEADER = 'moonpay-signature-v2';
/** How old a webhook's signature may be: a captured one cannot be replayed later. */
export const MOONPAY_WEBHOOK_TOLERANCE_S = 300;

export type MoonPayOptions = {
  /** The publishable key (pk_live_… or pk_test_…): the widget and the public endpoints. */
  apiKey: string;
  /** The secret key (sk_…): signs widget links and reads transactions. */
  secretKey: string;
  /** The webhook key of the dashboard's Developers page: checks webhook signatures. */
  webhookKey: string;
  apiUrl?: string | undefined;
  /** Unset: MoonPay's live widget for a live key, its sandbox widget for a test key. */
  widgetUrl?: string | undefined;
  /** Each request's deadline. */
  timeoutMs?: number | undefined;
  /** How long its currency list is kept. */
  currenciesTtlMs?: number | undefined;
};

/** MoonPay's network codes (metadata.networkCode) of the networks this wallet runs. */
const NETWORK_OF: Readonly<Record<string, Network>> = { ethereum: 'ETHEREUM', tron: 'TRON', bitcoin: 'BITCOIN', litecoin: 'LITECOIN', dogecoin: 'DOGECOIN', ton: 'TON' };

const LIMITS_TTL_MS = 60_000;

// After parseExact every JSON number is its decimal text.
const decimal = z.string().regex(/^-?\d+(?:\.\d+)?$/);
const currencySchema = z.object({
  type: z.enum(['crypto', 'fiat']).or(z.string()),
  code: z.string().min(1),
  name: z.string().default(''),
  isSuspended: z.boolean().nullish(),
  metadata: z.object({ contractAddress: z.string().nullish(), networkCode: z.string().nullish() }).nullish(),
});
const ipSchema = z.object({ alpha2: z.string().nullish(), isAllowed: z.boolean().nullish(), isBuyAllowed: z.boolean().nullish() });
const limitsSchema = z.object({ paymentMethod: z.string().nullish(), baseCurrency: z.object({ code: z.string(), minBuyAmount: decimal, maxBuyAmount: decimal }) });
const quoteSchema = z.object({
  paymentMethod: z.string().nullish(),
  quoteCurrencyAmount: decimal,
  totalAmount: decimal,
  feeAmount: decimal.nullish(),
  extraFeeAmount: decimal.nullish(),
  networkFeeAmount: decimal.nullish(),
});
const transactionSchema = z.object({
  id: z.string().min(1),
  status: z.enum(ON_RAMP_STATUSES),
  externalTransactionId: z.string().nullish(),
  walletAddress: z.string(),
  cryptoTransactionId: z.string().nullish(),
  quoteCurrencyAmount: decimal.nullish(),
  failureReason: z.string().nullish(),
  updatedAt: z.string(),
  currency: z.object({ code: z.string() }).nullish(),
  stages: z.array(z.object({ stage: z.string(), status: z.string(), failureReason: z.string().nullish() })).nullish(),
});
const webhookSchema = z.object({ type: z.string().min(1), data: transactionSchema });
const errorSchema = z.object({ message: z.string() });

/** A JSON number's text as written, with an exponent written out exactly (1.5e-7 → 0.00000015). */
export function plainDecimal(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/.exec(text);
  if (!match) return text;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  const written = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return sign + written.replace(/^0+(?=\d)/, '');
}

/** JSON whose numbers stay the decimal text they were written as. */
export function parseExact(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => (typeof value === 'number' && context?.source !== undefined ? plainDecimal(context.source) : value));
}

function toTransaction(data: z.output<typeof transactionSchema>): OnRampTransaction {
  return {
    id: data.id,
    reference: data.externalTransactionId ?? null,
    status: data.status,
    walletAddress: data.walletAddress,
    code: data.currency?.code ?? null,
    cryptoAmount: data.quoteCurrencyAmount ?? null,
    txHash: data.cryptoTransactionId ?? null,
    failureReason: data.failureReason ?? null,
    failureCode: data.stages?.find((stage) => stage.failureReason)?.failureReason ?? null,
    updatedAt: data.updatedAt,
  };
}

/** Checks `t=…,s=…` against the body: HMAC-SHA256 of `${t}.${body}` with the webhook key, within the tolerance. */
export function checkMoonPaySignature(key: string, header: string | undefined, body: string, nowS: number): OnRampWebhook | null {
  if (!header) return { ok: false, problem: 'MISSING' };
  const parts = new Map(
    header.split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const timestamp = parts.get('t') ?? '';
  const signature = parts.get('s') ?? '';
  if (!/^\d{1,12}$/.test(timestamp) || !/^[0-9a-f]{64}$/.test(signature)) return { ok: false, problem: 'MALFORMED' };
  if (Math.abs(nowS - Number(timestamp)) > MOONPAY_WEBHOOK_TOLERANCE_S) return { ok: false, problem: 'STALE' };
  const expected = createHmac('sha256', key).update(`${timestamp}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? null : { ok: false, problem: 'MISMATCH' };
}

/** How MoonPay signs a webhook (for its stand-in in tests, and to document the scheme next to its check). */
export function signMoonPayWebhook(key: string, body: string, timestampS: number): string {
  return `t=${timestampS},s=${createHmac('sha256', key).update(`${timestampS}.${body}`).digest('hex')}`;
}

export function createMoonPay(options: MoonPayOptions): OnRampProvider {
  const apiUrl = (options.apiUrl ?? MOONPAY_API_URL).replace(/\/+$/, '');
  const widgetUrl = options.widgetUrl ?? (options.apiKey.startsWith('pk_live') ? MOONPAY_WIDGET_URL : MOONPAY_SANDBOX_WIDGET_URL);
  const timeoutMs = options.timeoutMs ?? 8_000;
  const currenciesTtlMs = options.currenciesTtlMs ?? 600_000;
  // The SDK logs to the console when debugging: the gateway logs through its own logger.
  const signer = new MoonPay(options.secretKey, { debug: false });

  /** One GET; undefined for a 404 when `missing` allows it. A 4xx is a refusal with MoonPay's message; anything else is unavailable. */
  async function get(path: string, query: Record<string, string>, how: { secret?: boolean; missing?: boolean } = {}): Promise<unknown> {
    const url = new URL(`${apiUrl}${path}`);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    if (!how.secret) url.searchParams.set('apiKey', options.apiKey);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json', ...(how.secret ? { authorization: `Api-Key ${options.secretKey}` } : {}) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new OnRampUnavailableError(`MoonPay did not answer ${path} within ${timeoutMs} ms`, { cause: error });
    }
    if (response.status === 404 && how.missing) return undefined;
    let body: unknown;
    try {
      body = parseExact(text);
    } catch (error) {
      throw new OnRampUnavailableError(`MoonPay answered ${path} with ${response.status} and no JSON`, { cause: error });
    }
    if (response.ok) return body;
    const message = errorSchema.safeParse(body).data?.message ?? `HTTP ${response.status}`;
    if (response.status >= 400 && response.status < 500 && response.status !== 401 && response.status !== 403 && response.status !== 429) {
      throw new OnRampRefusedError(message);
    }
    throw new OnRampUnavailableError(`MoonPay answered ${path} with ${response.status}: ${message}`);
  }

  function read<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw new OnRampUnavailableError(`MoonPay's ${what} is not in the documented shape: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
    return parsed.data;
  }

  let currencies: { at: number; list: Promise<z.output<typeof currencySchema>[]> } | undefined;
  function allCurrencies(): Promise<z.output<typeof currencySchema>[]> {
    if (currencies && Date.now() - currencies.at < currenciesTtlMs) return currencies.list;
    const list = get('/v3/currencies', {}).then((body) => read(z.array(currencySchema), body, 'currency list'));
    const entry = { at: Date.now(), list };
    currencies = entry;
    // A failed answer is not kept: the next call asks again.
    list.catch(() => {
      if (currencies === entry) currencies = undefined;
    });
    return list;
  }

  const limitsCache = new Map<string, { at: number; limits: OnRampLimits }>();

  return {
    name: 'moonpay',
    signatureHeader: MOONPAY_SIGNATURE_HEADER,

    async cryptoCurrencies(): Promise<OnRampCrypto[]> {
      return (await allCurrencies())
        .filter((c) => c.type === 'crypto')
        .map((c) => ({
          code: c.code,
          name: c.name,
          network: c.metadata?.networkCode ? NETWORK_OF[c.metadata.networkCode] : undefined,
          contractAddress: c.metadata?.contractAddress ?? null,
          suspended: c.isSuspended === true,
        }));
    },

    async fiatCurrencies(): Promise<OnRampFiat[]> {
      return (await allCurrencies()).filter((c) => c.type === 'fiat').map((c) => ({ code: c.code.toUpperCase(), name: c.name }));
    },

    async country(ipAddress: string): Promise<OnRampCountry> {
      const body = read(ipSchema, await get('/v4/ip_address', { ipAddress }), 'IP address check');
      return { country: body.alpha2 ?? undefined, buyAllowed: body.isAllowed !== false && body.isBuyAllowed === true };
    },

    async limits(code: string, fiat: string, method: string): Promise<OnRampLimits> {
      const key = `${code}/${fiat}/${method}`;
      const kept = limitsCache.get(key);
      if (kept && Date.now() - kept.at < LIMITS_TTL_MS) return kept.limits;
      const query = { baseCurrencyCode: fiat.toLowerCase(), paymentMethod: method, areFeesIncluded: 'true' };
      const body = read(limitsSchema, await get(`/v3/currencies/${encodeURIComponent(code)}/limits`, query), 'limits');
      const limits = { method, fiat, min: body.baseCurrency.minBuyAmount, max: body.baseCurrency.maxBuyAmount };
      limitsCache.set(key, { at: Date.now(), limits });
      return limits;
    },

    async quote(request: OnRampQuoteRequest): Promise<OnRampQuote> {
      const amount: Record<string, string> = 'fiatAmount' in request ? { baseCurrencyAmount: request.fiatAmount } : { quoteCurrencyAmount: request.cryptoAmount };
      const query = { baseCurrencyCode: request.fiat.toLowerCase(), paymentMethod: request.method, areFeesIncluded: 'true', ...amount };
      const body = read(quoteSchema, await get(`/v3/currencies/${encodeURIComponent(request.code)}/buy_quote`, query), 'buy quote');
      return {
        method: request.method,
        fiat: request.fiat,
        fiatAmount: body.totalAmount,
        cryptoAmount: body.quoteCurrencyAmount,
        fees: { provider: body.feeAmount ?? '0', network: body.networkFeeAmount ?? '0', partner: body.extraFeeAmount ?? '0' },
      };
    },

    widgetUrl(request: OnRampWidgetRequest): string {
      const url = new URL(widgetUrl);
      const params: Record<string, string | undefined> = {
        apiKey: options.apiKey,
        currencyCode: request.code,
        walletAddress: request.walletAddress,
        baseCurrencyCode: request.fiat.toLowerCase(),
        baseCurrencyAmount: request.fiatAmount,
        // The amount was quoted and ordered: the buyer pays that, not another one typed on MoonPay's page.
        lockAmount: 'true',
        paymentMethod: request.method,
        externalTransactionId: request.reference,
        externalCustomerId: request.customer,
        redirectURL: request.returnUrl,
        email: request.email,
        language: request.language,
      };
      for (const [name, value] of Object.entries(params)) if (value) url.searchParams.set(name, value);
      const signed = signer.url.generateSignature(url.toString(), { returnFullUrl: true });
      if (!signed) throw new OnRampUnavailableError('the MoonPay widget link could not be signed');
      return signed;
    },

    async transaction(reference: string): Promise<OnRampTransaction | undefined> {
      const body = await get(`/v1/transactions/ext/${encodeURIComponent(reference)}`, {}, { secret: true, missing: true });
      if (body === undefined) return undefined;
      const list = read(z.array(transactionSchema), Array.isArray(body) ? body : [body], 'transaction');
      const newest = list.toSorted((a, b) => b.updatedAt.localeCompare(a.updatedAt))[0];
      return newest && toTransaction(newest);
    },

    readWebhook(signature: string | undefined, body: string, nowS: number): OnRampWebhook {
      const problem = checkMoonPaySignature(options.webhookKey, signature, body, nowS);
      if (problem) return problem;
      let parsed: unknown;
      try {
        parsed = parseExact(body);
      } catch {
        return { ok: false, problem: 'BODY' };
      }
      const event = webhookSchema.safeParse(parsed);
      if (!event.success) return { ok: false, problem: 'BODY' };
      return { ok: true, event: { type: event.data.type, transaction: toTransaction(event.data.data) } };
    },
  };
}
