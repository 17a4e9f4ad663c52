/**
 * Fiat reference rates from the issuing central banks' published daily documents: units of EUR, CAD, KZT, UAH, AZN
 * and RUB per one US dollar, each parsed from its bank's own format (ECB and Bank of Canada quote USD against their
 * currency; the others quote their currency per N USD). Exact: every rate is a bigint scaled by PRICE_SCALE.
 *
 * Documents (URL, then shape):
 * - ECB            eurofxref-daily.xml: gesmes:Envelope > Cube > Cube time='YYYY-MM-DD' > Cube currency='USD' rate='1.0512'
 *                  (USD per 1 EUR, so EUR per USD = 1 / rate).
 * - Bank of Canada Valet FXUSDCAD json: { observations: [{ d: 'YYYY-MM-DD', FXUSDCAD: { v: '1.4335' } }] } (CAD per USD).
 * - NBK            rss/rates_all.xml: rss > channel > item { title USD, pubDate DD.MM.YYYY, description 502.3, quant 1 }.
 * - NBU            statdirectory/exchange?valcode=USD&json: [{ r030: 840, rate: 41.5, cc: 'USD', exchangedate: 'DD.MM.YYYY' }].
 * - CBAR           currencies/DD.MM.YYYY.xml: ValCurs Date='DD.MM.YYYY' > ValType > Valute Code='USD' { Nominal, Value }.
 * - Bank of Russia XML_daily.asp (windows-1251): ValCurs Date='DD.MM.YYYY' > Valute { CharCode USD, Nominal, Value 92,1234 }.
 */
import { PRICE_SCALE } from './port.ts';

export type FiatRate = {
  fiat: string;
  /** Units of `fiat` per one US dollar, scaled by PRICE_SCALE. */
  perUsd: bigint;
  /** YYYY-MM-DD: the rate's official date as the bank states it. */
  date: string;
  /** 'ecb' | 'boc' | 'nbk' | 'nbu' | 'cbar' | 'cbr' */
  source: string;
};

export type CentralBank = {
  source: string;
  fiat: string;
  /** The bank's name, as errors name it. */
  name: string;
  /** The published document for `date` (most banks publish one latest document and ignore the date). */
  url: (date: Date) => string;
  parse: (text: string) => FiatRate;
};

/** An exact decimal: units / 10^scale. */
type Decimal = { units: bigint; scale: number };

const DECIMAL_TEXT = /^(\d+)(?:[.,](\d+))?$/;
/** JSON numbers may carry an exponent; kept exact by shifting the scale. */
const JSON_NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

function fail(bank: string, message: string): never {
  throw new Error(`${bank}: ${message}`);
}

/** A bank's rate text ("92,1234", "1.0512") to an exact positive decimal; anything else is refused with the bank's name. */
function positiveDecimal(bank: string, text: string | undefined, what: string): Decimal {
  const trimmed = (text ?? '').trim();
  let units: bigint;
  let scale: number;
  const plain = DECIMAL_TEXT.exec(trimmed);
  const json = plain ? null : JSON_NUMBER.exec(trimmed);
  if (plain) {
    const [, whole = '0', fraction = ''] = plain;
    units = BigInt(whole + fraction);
    scale = fraction.length;
  } else if (json) {
    const [, sign = '', whole = '0', fraction = '', exponent = '0'] = json;
    if (sign) fail(bank, `${what} is not a positive rate: ${JSON.stringify(trimmed)}`);
    const shift = Number.parseInt(exponent, 10);
    if (Math.abs(shift) > 30) fail(bank, `${what} is out of range: ${JSON.stringify(trimmed.slice(0, 40))}`);
    units = BigInt(whole + fraction);
    scale = fraction.length - shift;
    if (scale < 0) {
      units *= 10n ** BigInt(-scale);
      scale = 0;
    }
  } else {
    fail(bank, `${what} is not a decimal number: ${JSON.stringify(trimmed.slice(0, 40))}`);
  }
  if (units <= 0n) fail(bank, `${what} is not a positive rate: ${JSON.stringify(trimmed)}`);
  return { units, scale };
}

/** A nominal ("1", "100"): how many units of the foreign currency the published value is for. */
function nominal(bank: string, text: string | undefined): bigint {
  const trimmed = (text ?? '1').trim();
  if (!/^\d+$/.test(trimmed) || BigInt(trimmed) <= 0n) fail(bank, `the USD nominal is not a positive whole number: ${JSON.stringify(trimmed)}`);
  return BigInt(trimmed);
}

/** a / b of positive integers, rounded half-up. */
function divideHalfUp(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

/** "X fiat per N USD" to fiat per one USD at PRICE_DECIMALS, half-up. */
function perUsdFromFiatPerNominal(value: Decimal, per: bigint): bigint {
  return divideHalfUp(value.units * PRICE_SCALE, 10n ** BigInt(value.scale) * per);
}

/** "X USD per 1 fiat" to fiat per one USD (its inverse) at PRICE_DECIMALS, half-up. */
function perUsdFromUsdPerFiat(value: Decimal): bigint {
  return divideHalfUp(10n ** BigInt(value.scale) * PRICE_SCALE, value.units);
}

/** A YYYY-MM-DD that names a real calendar day. */
function isoDate(bank: string, year: string, month: string, day: string): string {
  const y = Number.parseInt(year.length === 2 ? `20${year}` : year, 10);
  const m = Number.parseInt(month, 10);
  const d = Number.parseInt(day, 10);
  const probe = new Date(Date.UTC(y, m - 1, d));
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== m - 1 || probe.getUTCDate() !== d) fail(bank, `not a calendar date: ${day}.${month}.${year}`);
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

function fromIso(bank: string, text: string | undefined): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec((text ?? '').trim());
  if (!match) fail(bank, `no date in the document (expected YYYY-MM-DD, got ${JSON.stringify(text ?? null)})`);
  return isoDate(bank, match[1] ?? '', match[2] ?? '', match[3] ?? '');
}

/** DD.MM.YYYY (NBK's feed has also been seen with DD.MM.YY). */
function fromDotted(bank: string, text: string | undefined): string {
  const match = /^(\d{2})\.(\d{2})\.(\d{4}|\d{2})$/.exec((text ?? '').trim());
  if (!match) fail(bank, `no date in the document (expected DD.MM.YYYY, got ${JSON.stringify(text ?? null)})`);
  return isoDate(bank, match[3] ?? '', match[2] ?? '', match[1] ?? '');
}

// No XML library: these documents are flat and fixed, so a few tolerant regexes (any whitespace, attribute order, quote style, CDATA) read them.
const XML_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function xmlText(raw: string): string {
  return raw
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => XML_ENTITIES[name] ?? '')
    .trim();
}

/** Start tags of an element (any namespace prefix), with their attribute source. */
function startTags(xml: string, name: string): string[] {
  return [...xml.matchAll(new RegExp(`<(?:[\\w.-]+:)?${name}(\\s[^<>]*?)?\\/?>`, 'g'))].map((m) => m[1] ?? '');
}

/** Whole elements (start tag attributes and inner text) of a non-empty element, e.g. every <item>…</item>. */
function elements(xml: string, name: string): Array<{ attributes: string; body: string }> {
  return [...xml.matchAll(new RegExp(`<(?:[\\w.-]+:)?${name}(\\s[^<>]*)?>([\\s\\S]*?)<\\/(?:[\\w.-]+:)?${name}\\s*>`, 'g'))].map((m) => ({
    attributes: m[1] ?? '',
    body: m[2] ?? '',
  }));
}

/** The text of the first child element `name` (undefined when absent; '' when empty or self-closed). */
function childText(xml: string, name: string): string | undefined {
  const full = new RegExp(`<(?:[\\w.-]+:)?${name}(?:\\s[^<>]*)?>([\\s\\S]*?)<\\/(?:[\\w.-]+:)?${name}\\s*>`).exec(xml);
  if (full) return xmlText(full[1] ?? '');
  return new RegExp(`<(?:[\\w.-]+:)?${name}(?:\\s[^<>]*)?\\/>`).test(xml) ? '' : undefined;
}

function attribute(attributes: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(attributes);
  return match ? xmlText(match[1] ?? match[2] ?? '') : undefined;
}

/** Refuses what is plainly not the document: empty, or an HTML (error) page. */
function assertDocument(bank: string, text: string): void {
  const head = text.replace(/^\uFEFF/, '').trimStart().slice(0, 1024).toLowerCase();
  if (!head) fail(bank, 'the document is empty');
  if (/^(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html[\s>])/.test(head)) fail(bank, 'got an HTML page, not the rates document');
}

/** JSON with every number kept as its source text, never a float (Node 24's JSON.parse source-text access). */
function parseJsonExact(bank: string, text: string): unknown {
  assertDocument(bank, text);
  try {
    return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) => {
      if (typeof value !== 'number') return value;
      if (typeof context?.source !== 'string') throw new Error('this runtime does not expose JSON number source text');
      return context.source;
    });
  } catch (error) {
    fail(bank, `the document is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const ECB = 'European Central Bank';
const BOC = 'Bank of Canada';
const NBK = 'National Bank of Kazakhstan';
const NBU = 'National Bank of Ukraine';
const CBAR = 'Central Bank of Azerbaijan';
const CBR = 'Bank of Russia';

/** ECB euro reference rates: the USD cube's rate is USD per one EUR; the date is the enclosing cube's `time`. */
export function parseEcb(text: string): FiatRate {
  assertDocument(ECB, text);
  let time: string | undefined;
  for (const attributes of startTags(text, 'Cube')) {
    time = attribute(attributes, 'time') ?? time;
    if (attribute(attributes, 'currency')?.toUpperCase() !== 'USD') continue;
    const rate = positiveDecimal(ECB, attribute(attributes, 'rate'), 'the USD rate');
    return { fiat: 'EUR', perUsd: perUsdFromUsdPerFiat(rate), date: fromIso(ECB, time), source: 'ecb' };
  }
  fail(ECB, 'no USD rate in the document');
}

/** Bank of Canada Valet FXUSDCAD: the latest observation that has a value (CAD per one USD). */
export function parseBankOfCanada(text: string): FiatRate {
  const data = parseJsonExact(BOC, text);
  const observations = isRecord(data) ? data.observations : undefined;
  if (!Array.isArray(observations)) fail(BOC, 'the document has no observations');
  let latest: { d: string; v: string } | undefined;
  for (const observation of observations) {
    if (!isRecord(observation) || typeof observation.d !== 'string') continue;
    const cell = observation.FXUSDCAD;
    if (!isRecord(cell) || typeof cell.v !== 'string' || cell.v.trim() === '') continue;
    if (!latest || observation.d > latest.d) latest = { d: observation.d, v: cell.v };
  }
  if (!latest) fail(BOC, 'no USD rate (FXUSDCAD) in the document');
  const rate = positiveDecimal(BOC, latest.v, 'the USD rate');
  return { fiat: 'CAD', perUsd: perUsdFromFiatPerNominal(rate, 1n), date: fromIso(BOC, latest.d), source: 'boc' };
}

/** National Bank of Kazakhstan RSS: the USD item's description is KZT per `quant` USD, dated by its pubDate. */
export function parseNbk(text: string): FiatRate {
  assertDocument(NBK, text);
  for (const { body } of elements(text, 'item')) {
    if (childText(body, 'title')?.toUpperCase() !== 'USD') continue;
    const rate = positiveDecimal(NBK, childText(body, 'description'), 'the USD rate');
    const quant = nominal(NBK, childText(body, 'quant') || undefined);
    // rates_all.xml dates each item; the dated get_rates.cfm form dates the whole document instead.
    const date = fromDotted(NBK, childText(body, 'pubDate') || childText(text, 'date'));
    return { fiat: 'KZT', perUsd: perUsdFromFiatPerNominal(rate, quant), date, source: 'nbk' };
  }
  fail(NBK, 'no USD rate in the document');
}

/** National Bank of Ukraine exchange JSON: the cc USD row's rate is UAH per one USD, for its exchangedate. */
export function parseNbu(text: string): FiatRate {
  const data = parseJsonExact(NBU, text);
  if (!Array.isArray(data)) fail(NBU, 'the document is not a list of rates');
  const row = data.find((entry): entry is Record<string, unknown> => isRecord(entry) && (entry.cc === 'USD' || entry.r030 === '840'));
  if (!row) fail(NBU, 'no USD rate in the document');
  const rate = positiveDecimal(NBU, typeof row.rate === 'string' ? row.rate : undefined, 'the USD rate');
  return { fiat: 'UAH', perUsd: perUsdFromFiatPerNominal(rate, 1n), date: fromDotted(NBU, typeof row.exchangedate === 'string' ? row.exchangedate : undefined), source: 'nbu' };
}

/** Central Bank of Azerbaijan bulletin: the Valute Code USD's Value is AZN per Nominal USD; dated by ValCurs Date. */
export function parseCbar(text: string): FiatRate {
  assertDocument(CBAR, text);
  const root = startTags(text, 'ValCurs')[0];
  if (root === undefined) fail(CBAR, 'not a ValCurs document');
  for (const { attributes, body } of elements(text, 'Valute')) {
    if (attribute(attributes, 'Code')?.toUpperCase() !== 'USD') continue;
    const rate = positiveDecimal(CBAR, childText(body, 'Value'), 'the USD rate');
    const per = nominal(CBAR, childText(body, 'Nominal'));
    return { fiat: 'AZN', perUsd: perUsdFromFiatPerNominal(rate, per), date: fromDotted(CBAR, attribute(root, 'Date')), source: 'cbar' };
  }
  fail(CBAR, 'no USD rate in the document');
}

/** Bank of Russia XML_daily: the CharCode USD Valute's Value (comma decimals) is RUB per Nominal USD; dated by ValCurs Date. */
export function parseCbr(text: string): FiatRate {
  assertDocument(CBR, text);
  const root = startTags(text, 'ValCurs')[0];
  if (root === undefined) fail(CBR, 'not a ValCurs document');
  for (const { body } of elements(text, 'Valute')) {
    if (childText(body, 'CharCode')?.toUpperCase() !== 'USD') continue;
    const rate = positiveDecimal(CBR, childText(body, 'Value'), 'the USD rate');
    const per = nominal(CBR, childText(body, 'Nominal'));
    return { fiat: 'RUB', perUsd: perUsdFromFiatPerNominal(rate, per), date: fromDotted(CBR, attribute(root, 'Date')), source: 'cbr' };
  }
  fail(CBR, 'no USD rate in the document');
}

/** DD.MM.YYYY of `date` in Baku (UTC+4 all year, no daylight saving since 2016): CBAR names its bulletins by that day. */
function bakuDay(date: Date): string {
  const baku = new Date(date.getTime() + 4 * 60 * 60 * 1000);
  return `${String(baku.getUTCDate()).padStart(2, '0')}.${String(baku.getUTCMonth() + 1).padStart(2, '0')}.${baku.getUTCFullYear()}`;
}

export const CENTRAL_BANKS = {
  EUR: { source: 'ecb', fiat: 'EUR', name: ECB, url: () => 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml', parse: parseEcb },
  CAD: { source: 'boc', fiat: 'CAD', name: BOC, url: () => 'https://www.bankofcanada.ca/valet/observations/FXUSDCAD/json?recent=1', parse: parseBankOfCanada },
  KZT: { source: 'nbk', fiat: 'KZT', name: NBK, url: () => 'https://nationalbank.kz/rss/rates_all.xml', parse: parseNbk },
  UAH: { source: 'nbu', fiat: 'UAH', name: NBU, url: () => 'https://bank.gov.ua/NBUStatService/v1/statdirectory/exchange?valcode=USD&json', parse: parseNbu },
  AZN: { source: 'cbar', fiat: 'AZN', name: CBAR, url: (date: Date) => `https://www.cbar.az/currencies/${bakuDay(date)}.xml`, parse: parseCbar },
  RUB: { source: 'cbr', fiat: 'RUB', name: CBR, url: () => 'https://www.cbr.ru/scripts/XML_daily.asp', parse: parseCbr },
} as const satisfies Readonly<Record<string, CentralBank>>;

// A base URL override replaces the default URL's origin and is prefixed to its path, keeping path and query:
// base 'http://127.0.0.1:8080/cbr' turns https://www.cbr.ru/scripts/XML_daily.asp into http://127.0.0.1:8080/cbr/scripts/XML_daily.asp.
function withBase(url: string, base: string | undefined): string {
  if (!base) return url;
  const target = new URL(url);
  const origin = new URL(base);
  return `${origin.origin}${origin.pathname.replace(/\/+$/, '')}${target.pathname}${target.search}`;
}

/** The charset named by a Content-Type header, else by the XML declaration, else UTF-8 (JSON is always UTF-8). */
function charsetOf(bytes: Uint8Array, contentType: string | null): string {
  const header = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType ?? '');
  if (header?.[1]) return header[1];
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 256));
  const declared = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([\w.:-]+)["']/i.exec(head);
  return declared?.[1] ?? 'utf-8';
}

function decode(bytes: Uint8Array, contentType: string | null): string {
  const charset = charsetOf(bytes, contentType);
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    throw new Error(`unsupported charset ${JSON.stringify(charset)}`);
  }
}

export type CentralBankFetchOptions = {
  /** Per source id ('ecb', 'cbr'…): a base URL standing in for the bank's origin (tests, proxies). */
  baseUrls?: Partial<Record<string, string>>;
  fetch?: typeof fetch;
  /** Per bank, for the whole request and body; 10 s by default. */
  timeoutMs?: number;
  now?: Date;
  /** Fiats to fetch (EUR, CAD…); all six by default. */
  only?: readonly string[];
};

export type CentralBankRates = {
  rates: FiatRate[];
  errors: Array<{ source: string; fiat: string; error: string }>;
};

const DEFAULT_TIMEOUT_MS = 10_000;

/** An error's message, with its cause's (undici's "fetch failed" says why only there). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

async function fetchOne(bank: CentralBank, options: CentralBankFetchOptions, now: Date): Promise<FiatRate> {
  const url = withBase(bank.url(now), options.baseUrls?.[bank.source]);
  let text: string;
  try {
    const response = await (options.fetch ?? fetch)(url, {
      signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      headers: { accept: 'application/xml, application/json, text/xml;q=0.9, */*;q=0.5' },
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`HTTP ${response.status} from ${url}`);
    }
    text = decode(new Uint8Array(await response.arrayBuffer()), response.headers.get('content-type'));
  } catch (error) {
    fail(bank.name, describe(error));
  }
  return bank.parse(text);
}

/** Every bank's latest USD rate, fetched in parallel; a bank that fails (network, timeout, HTTP, format) lands in `errors`, never failing the others. */
export async function fetchCentralBankRates(options: CentralBankFetchOptions = {}): Promise<CentralBankRates> {
  const now = options.now ?? new Date();
  const wanted = options.only ? new Set(options.only.map((fiat) => fiat.toUpperCase())) : undefined;
  const banks: CentralBank[] = Object.values(CENTRAL_BANKS).filter((bank) => !wanted || wanted.has(bank.fiat));
  const settled = await Promise.allSettled(banks.map((bank) => fetchOne(bank, options, now)));
  const result: CentralBankRates = { rates: [], errors: [] };
  settled.forEach((outcome, index) => {
    const bank = banks[index];
    if (!bank) return;
    if (outcome.status === 'fulfilled') result.rates.push(outcome.value);
    else result.errors.push({ source: bank.source, fiat: bank.fiat, error: outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason) });
  });
  return result;
}
