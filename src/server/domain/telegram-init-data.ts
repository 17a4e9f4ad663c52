import { createHmac, timingSafeEqual } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { z } from 'zod';
import { DEFAULT_INIT_DATA_MAX_AGE_S, TELEGRAM_PUBLIC_KEYS } from '../../lib/telegram.ts';

/**
 * The mini app's init data, checked as Telegram specifies
 * (https://core.telegram.org/bots/webapps#validating-data-received-via-the-mini-app):
 * - `hash`: HMAC-SHA256 of the data-check-string with the key HMAC-SHA256(key = 'WebAppData', bot token);
 * - `signature` (third-party validation): Ed25519 over `${botId}:WebAppData\n` + the data-check-string without
 *   `hash` and `signature`, against Telegram's published public key (configuration may replace it for tests);
 * - `auth_date` no older than the allowed age.
 */

export type InitDataProblem = 'MALFORMED' | 'BAD_HASH' | 'BAD_SIGNATURE' | 'EXPIRED';

/** Why init data was refused: malformed, forged (hash or signature) or stale. */
export class InitDataError extends Error {
  readonly problem: InitDataProblem;
  constructor(problem: InitDataProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

const telegramUser = z.object({
  id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  first_name: z.string().max(256).default(''),
  last_name: z.string().max(256).optional(),
  username: z.string().max(64).optional(),
  language_code: z.string().max(35).optional(),
  is_bot: z.boolean().optional(),
  is_premium: z.boolean().optional(),
  photo_url: z.string().max(2048).optional(),
});

export type TelegramUser = z.infer<typeof telegramUser>;

export type ValidInitData = {
  user: TelegramUser;
  /** Seconds since the epoch. */
  authDate: number;
  startParam?: string;
  queryId?: string;
  /** Whether the third-party Ed25519 signature was present (and so verified). */
  signed: boolean;
};

export type InitDataCheck = {
  botToken: string;
  /** Hex Ed25519 public key; Telegram's production key unless configured. */
  publicKey?: string;
  /** Refuse init data without a third-party signature (clients before Bot API 8.0 send none). */
  requireSignature?: boolean;
  maxAgeS?: number;
  /** Seconds since the epoch. */
  now?: number;
};

const MAX_LENGTH = 8 * 1024;

/** The bot's numeric id: the part of its token before the colon. */
export function botIdOf(botToken: string): string {
  const id = botToken.split(':')[0] ?? '';
  if (!/^\d{1,20}$/.test(id)) throw new Error('a bot token looks like 123456:ABC…');
  return id;
}

/** `key=value` lines sorted by key, without the named keys, joined by newlines. */
export function dataCheckString(params: URLSearchParams, without: readonly string[]): string {
  return [...params.entries()]
    .filter(([key]) => !without.includes(key))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}

function secretKey(botToken: string): Buffer {
  return createHmac('sha256', 'WebAppData').update(botToken).digest();
}

function hashOf(params: URLSearchParams, botToken: string): string {
  return createHmac('sha256', secretKey(botToken)).update(dataCheckString(params, ['hash'])).digest('hex');
}

function signedMessage(params: URLSearchParams, botToken: string): Uint8Array {
  return new TextEncoder().encode(`${botIdOf(botToken)}:WebAppData\n${dataCheckString(params, ['hash', 'signature'])}`);
}

function fromBase64Url(value: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(value)) return undefined;
  return new Uint8Array(Buffer.from(value, 'base64url'));
}

/** Checks raw init data (the query string Telegram hands the mini app); throws InitDataError when refused. */
export function validateInitData(raw: string, check: InitDataCheck): ValidInitData {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_LENGTH) throw new InitDataError('MALFORMED', 'The init data is empty or too long');
  const params = new URLSearchParams(raw);
  const hash = params.get('hash');
  if (!hash || !/^[0-9a-f]{64}$/i.test(hash) || params.getAll('hash').length !== 1) throw new InitDataError('MALFORMED', 'The init data has no valid hash');
  const keys = [...params.keys()];
  if (new Set(keys).size !== keys.length) throw new InitDataError('MALFORMED', 'The init data repeats a field');

  const expected = Buffer.from(hashOf(params, check.botToken), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(hash.toLowerCase(), 'hex'))) throw new InitDataError('BAD_HASH', 'The init data hash does not match');

  // An empty field is an absent one: @telegram-apps/init-data-node writes `signature=` when it signs without a key.
  const signature = params.get('signature') || null;
  if (signature !== null) {
    const bytes = fromBase64Url(signature);
    const key = Buffer.from(check.publicKey ?? TELEGRAM_PUBLIC_KEYS.production, 'hex');
    let valid = false;
    try {
      valid = bytes !== undefined && bytes.length === 64 && ed25519.verify(bytes, signedMessage(params, check.botToken), new Uint8Array(key));
    } catch {
      valid = false;
    }
    if (!valid) throw new InitDataError('BAD_SIGNATURE', 'The init data signature does not verify');
  } else if (check.requireSignature) {
    throw new InitDataError('BAD_SIGNATURE', 'The init data carries no signature');
  }

  const authDate = Number(params.get('auth_date'));
  if (!Number.isInteger(authDate) || authDate <= 0) throw new InitDataError('MALFORMED', 'The init data has no auth_date');
  const now = check.now ?? Math.floor(Date.now() / 1000);
  const maxAge = check.maxAgeS ?? DEFAULT_INIT_DATA_MAX_AGE_S;
  // A little clock skew forward is tolerated; anything older than the allowed age is stale.
  if (now - authDate > maxAge || authDate - now > 60) throw new InitDataError('EXPIRED', 'The init data is stale');

  let user: TelegramUser;
  try {
    user = telegramUser.parse(JSON.parse(params.get('user') ?? ''));
  } catch {
    throw new InitDataError('MALFORMED', 'The init data names no valid user');
  }
  return { user, authDate, startParam: params.get('start_param') ?? undefined, queryId: params.get('query_id') ?? undefined, signed: signature !== null };
}

/**
 * Builds init data as Telegram would: the fields, `signature` when an Ed25519 private key (hex seed) is given, then
 * `hash`. Used by the development mode (a generated token stands in for a bot's) and by the tests.
 */
export function signInitData(
  fields: { user: TelegramUser; authDate: number; queryId?: string; startParam?: string; extra?: Record<string, string> },
  keys: { botToken: string; privateKey?: string },
): string {
  const params = new URLSearchParams();
  params.set('auth_date', String(fields.authDate));
  if (fields.queryId) params.set('query_id', fields.queryId);
  if (fields.startParam) params.set('start_param', fields.startParam);
  params.set('user', JSON.stringify(fields.user));
  for (const [key, value] of Object.entries(fields.extra ?? {})) params.set(key, value);
  if (keys.privateKey) {
    const signature = ed25519.sign(signedMessage(params, keys.botToken), new Uint8Array(Buffer.from(keys.privateKey, 'hex')));
    params.set('signature', Buffer.from(signature).toString('base64url'));
  }
  params.set('hash', hashOf(params, keys.botToken));
  return params.toString();
}

/** The hex public key of a hex Ed25519 private key (seed). */
export function ed25519PublicKey(privateKey: string): string {
  return Buffer.from(ed25519.getPublicKey(new Uint8Array(Buffer.from(privateKey, 'hex')))).toString('hex');
}
