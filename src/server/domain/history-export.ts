/**
 * The history as a CSV file (issue 36 item 4): one account's history items, of every asset or one, in a range of UTC
 * days, oldest first, with the columns a tax tool reads (date in UTC ISO 8601, type, asset, amount, fee, fiat value at
 * the time when known, hash, addresses). Amounts are exact decimals with a point whatever the user's language. Rows
 * are read page by page by keyset (created_at, id), so no export holds more than a page in memory.
 *
 * The download is a plain GET a browser or Telegram's webview can open: the app asks for a link (authenticated), and
 * the link carries its own proof, a keyed hash of what it exports and until when (5 minutes), so no bearer token ever
 * goes into a URL.
 */
import { timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { formatUnits } from '../../lib/amount.ts';
import { decimalsOf } from '../../lib/currencies.ts';
import type { SecretsKey } from '../adapters/keys/port.ts';
import { DomainError } from './errors.ts';

export type ExportQuery = { account: string; currency: string | undefined; from: string; to: string };

/** How long an export link works. */
export const EXPORT_LINK_TTL_S = 300;
/** The longest range one file covers. */
const MAX_RANGE_DAYS = 366 * 10;
const PAGE = 500;
const DAY_MS = 86_400_000;

export class ExportError extends DomainError<'EXPORT_RANGE_INVALID' | 'EXPORT_LINK_INVALID'> {}

/** A `YYYY-MM-DD` day as its UTC midnight; anything else is a bad range. */
function day(value: string, name: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const time = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (!match || Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== value) throw new ExportError('EXPORT_RANGE_INVALID', `${name} must be a day like 2026-01-31`);
  return time;
}

/** The range's bounds: from the first day's start to the last day's end (both UTC); a reversed or too long range is refused. */
export function exportRange(from: string, to: string): { start: Date; end: Date } {
  const start = day(from, 'from');
  const last = day(to, 'to');
  if (last < start) throw new ExportError('EXPORT_RANGE_INVALID', 'from must not be after to');
  if (last - start > MAX_RANGE_DAYS * DAY_MS) throw new ExportError('EXPORT_RANGE_INVALID', `a file covers at most ${MAX_RANGE_DAYS} days`);
  return { start: new Date(start), end: new Date(last + DAY_MS) };
}

const signed = (query: ExportQuery, expires: number) => [query.account, query.currency ?? '', query.from, query.to, String(expires)].join('|');

/** The link's query string for an export the caller may make (the range is checked first). */
export function exportLinkQuery(secrets: Pick<SecretsKey, 'keyedHash'>, query: ExportQuery, now = Date.now()): string {
  exportRange(query.from, query.to);
  const expires = Math.floor(now / 1000) + EXPORT_LINK_TTL_S;
  const params = new URLSearchParams({ ...(query.currency ? { currency: query.currency } : {}), from: query.from, to: query.to, expires: String(expires) });
  params.set('signature', secrets.keyedHash(signed(query, expires), 'history-export'));
  return params.toString();
}

/** Compares in constant time, so a signature cannot be guessed byte by byte from how long a refusal takes. */
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Checks a link's signature and time; refused links are 403 whatever is wrong with them. */
export function checkExportLink(secrets: Pick<SecretsKey, 'keyedHash'>, query: ExportQuery, expires: string | undefined, signature: string | undefined, now = Date.now()): void {
  const until = Number(expires);
  const expected = Number.isInteger(until) ? secrets.keyedHash(signed(query, until), 'history-export') : '';
  if (!signature || !sameText(signature, expected)) throw new ExportError('EXPORT_LINK_INVALID', 'This export link is not valid');
  if (until * 1000 < now) throw new ExportError('EXPORT_LINK_INVALID', 'This export link has expired; export again');
}

export const CSV_HEADER = ['date_utc', 'type', 'direction', 'state', 'asset', 'amount', 'fee', 'fee_asset', 'fiat_value', 'fiat_currency', 'network', 'hash', 'from_address', 'to_address'] as const;

type Row = {
  id: string;
  createdAt: Date;
  /** created_at to the microsecond, for the keyset (a Date keeps milliseconds only). */
  cursorAt: string;
  transactionType: string;
  direction: string;
  state: string;
  currency: string;
  amount: string;
  fee: string;
  feeCurrency: string | null;
  fiatAmount: string | null;
  fiatCurrency: string | null;
  network: string | null;
  hash: string | null;
  fromAddress: string | null;
  toAddress: string | null;
};

/** Exact decimal with a point of `units` of `currency` (raw units when the currency is not known). */
function decimal(units: string, currency: string | null): string {
  const decimals = currency ? decimalsOf(currency) : undefined;
  return decimals === undefined ? units : formatUnits(BigInt(units), decimals);
}

/** A CSV field: quoted when needed, and never read as a formula by a spreadsheet. */
function field(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function line(row: Row): string {
  return [
    row.createdAt.toISOString(),
    row.transactionType,
    row.direction,
    row.state,
    row.currency,
    decimal(row.amount, row.currency),
    decimal(row.fee, row.feeCurrency ?? row.currency),
    row.feeCurrency ?? row.currency,
    row.fiatAmount !== null && row.fiatCurrency ? decimal(row.fiatAmount, row.fiatCurrency) : '',
    row.fiatAmount !== null ? row.fiatCurrency : '',
    row.network,
    row.hash,
    row.fromAddress,
    row.toAddress,
  ]
    .map(field)
    .join(',');
}

/** The CSV, header first, a page of rows at a time. */
export async function* historyCsv(pool: pg.Pool, query: ExportQuery): AsyncGenerator<string> {
  const { start, end } = exportRange(query.from, query.to);
  yield `${CSV_HEADER.join(',')}\r\n`;
  let after: { cursorAt: string; id: string } | undefined;
  for (;;) {
    const page = await pool.query<Row>(
      `SELECT id, created_at AS "createdAt", created_at::text AS "cursorAt", transaction_type AS "transactionType", direction, state, currency, amount::text AS amount, fee::text AS fee,
              fee_currency AS "feeCurrency", fiat_amount::text AS "fiatAmount", fiat_currency AS "fiatCurrency", network, hash,
              from_address AS "fromAddress", to_address AS "toAddress"
         FROM wallet_transactions
        WHERE wallet_account_id = $1 AND created_at >= $2 AND created_at < $3 AND ($4::text IS NULL OR currency = $4)
          AND ($5::timestamptz IS NULL OR (created_at, id) > ($5, $6::uuid))
        ORDER BY created_at, id LIMIT $7`,
      [query.account, start, end, query.currency ?? null, after?.cursorAt ?? null, after?.id ?? null, PAGE],
    );
    if (page.rows.length > 0) yield page.rows.map((row) => `${line(row)}\r\n`).join('');
    const last = page.rows.at(-1);
    if (!last || page.rows.length < PAGE) return;
    after = { cursorAt: last.cursorAt, id: last.id };
  }
}
