import { createHmac, randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import {
  botIdOf,
  dataCheckString,
  ed25519PublicKey,
  InitDataError,
  signInitData,
  validateInitData,
  type InitDataProblem,
} from '../../../../src/server/domain/telegram-init-data.ts';
import { TELEGRAM_PUBLIC_KEYS } from '../../../../src/lib/telegram.ts';

const BOT_TOKEN = '7000000001:AAH-test-token-for-the-wallet-unit-tests';
const NOW = 1_760_000_000;
const PRIVATE_KEY = randomBytes(32).toString('hex');
const PUBLIC_KEY = ed25519PublicKey(PRIVATE_KEY);
const user = { id: 424242, first_name: 'Ann', last_name: 'Lee', username: 'ann', language_code: 'ru', allows_write_to_pm: true };

/** Init data built here, by hand, exactly as Telegram's documentation describes it (not with the code under test). */
function byTheBook(fields: Record<string, string>, token = BOT_TOKEN, privateKey?: string): string {
  const lines = (omit: string[]) =>
    Object.entries(fields)
      .filter(([key]) => !omit.includes(key))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => `${key}=${value}`)
      .join('\n');
  const params = new URLSearchParams(fields);
  if (privateKey) {
    const message = new TextEncoder().encode(`${token.split(':')[0]}:WebAppData\n${lines([])}`);
    params.set('signature', Buffer.from(ed25519.sign(message, new Uint8Array(Buffer.from(privateKey, 'hex')))).toString('base64url'));
  }
  const all = Object.fromEntries(params);
  const check = Object.entries(all)
    .filter(([key]) => key !== 'hash')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
  const secret = createHmac('sha256', 'WebAppData').update(token).digest();
  params.set('hash', createHmac('sha256', secret).update(check).digest('hex'));
  return params.toString();
}

const fields = { auth_date: String(NOW - 10), query_id: 'AAHdF6IQAAAAAN0XohDhrOrc', user: JSON.stringify(user), chat_instance: '-8200000000000000000', chat_type: 'private' };

function problemOf(run: () => unknown): InitDataProblem | 'accepted' {
  try {
    run();
    return 'accepted';
  } catch (error) {
    if (error instanceof InitDataError) return error.problem;
    throw error;
  }
}

describe('validateInitData', () => {
  it('accepts init data built with the known bot token and reads the user', () => {
    const result = validateInitData(byTheBook(fields), { botToken: BOT_TOKEN, now: NOW });
    expect(result.user).toMatchObject({ id: 424242, first_name: 'Ann', username: 'ann', language_code: 'ru' });
    expect(result.authDate).toBe(NOW - 10);
    expect(result.queryId).toBe(fields.query_id);
    expect(result.signed).toBe(false);
  });

  it('refuses any changed field', () => {
    const raw = byTheBook(fields);
    for (const key of Object.keys(fields)) {
      const params = new URLSearchParams(raw);
      params.set(key, key === 'user' ? JSON.stringify({ ...user, id: 1 }) : `${params.get(key)}1`);
      expect(problemOf(() => validateInitData(params.toString(), { botToken: BOT_TOKEN, now: NOW })), key).toBe('BAD_HASH');
    }
    const added = new URLSearchParams(raw);
    added.set('start_param', 'x');
    expect(problemOf(() => validateInitData(added.toString(), { botToken: BOT_TOKEN, now: NOW }))).toBe('BAD_HASH');
    const removed = new URLSearchParams(raw);
    removed.delete('chat_type');
    expect(problemOf(() => validateInitData(removed.toString(), { botToken: BOT_TOKEN, now: NOW }))).toBe('BAD_HASH');
    const hash = new URLSearchParams(raw);
    hash.set('hash', (hash.get('hash') ?? '').replace(/^./, (c) => (c === 'a' ? 'b' : 'a')));
    expect(problemOf(() => validateInitData(hash.toString(), { botToken: BOT_TOKEN, now: NOW }))).toBe('BAD_HASH');
  });

  it('refuses a wrong bot token', () => {
    const raw = byTheBook(fields, '7000000001:AAH-another-token');
    expect(problemOf(() => validateInitData(raw, { botToken: BOT_TOKEN, now: NOW }))).toBe('BAD_HASH');
  });

  it('refuses a stale date, with the default hour and a configured age', () => {
    const raw = byTheBook({ ...fields, auth_date: String(NOW - 3601) });
    expect(problemOf(() => validateInitData(raw, { botToken: BOT_TOKEN, now: NOW }))).toBe('EXPIRED');
    const fresh = byTheBook({ ...fields, auth_date: String(NOW - 3599) });
    expect(problemOf(() => validateInitData(fresh, { botToken: BOT_TOKEN, now: NOW }))).toBe('accepted');
    expect(problemOf(() => validateInitData(fresh, { botToken: BOT_TOKEN, now: NOW, maxAgeS: 60 }))).toBe('EXPIRED');
    const future = byTheBook({ ...fields, auth_date: String(NOW + 3600) });
    expect(problemOf(() => validateInitData(future, { botToken: BOT_TOKEN, now: NOW }))).toBe('EXPIRED');
  });

  it('refuses malformed input', () => {
    for (const raw of ['', 'user=1', 'hash=zz', 'a'.repeat(9000)]) expect(problemOf(() => validateInitData(raw, { botToken: BOT_TOKEN, now: NOW }))).toBe('MALFORMED');
    const noUser = byTheBook({ auth_date: String(NOW) });
    expect(problemOf(() => validateInitData(noUser, { botToken: BOT_TOKEN, now: NOW }))).toBe('MALFORMED');
    const badUser = byTheBook({ auth_date: String(NOW), user: '{"id":"x"}' });
    expect(problemOf(() => validateInitData(badUser, { botToken: BOT_TOKEN, now: NOW }))).toBe('MALFORMED');
  });

  describe('the Ed25519 third-party signature', () => {
    it('verifies a vector signed by the test with the configured public key', () => {
      const raw = byTheBook(fields, BOT_TOKEN, PRIVATE_KEY);
      const result = validateInitData(raw, { botToken: BOT_TOKEN, publicKey: PUBLIC_KEY, now: NOW });
      expect(result.signed).toBe(true);
      // The signed message is `${botId}:WebAppData\n` + the sorted lines without hash and signature.
      const params = new URLSearchParams(raw);
      const message = new TextEncoder().encode(`${botIdOf(BOT_TOKEN)}:WebAppData\n${dataCheckString(params, ['hash', 'signature'])}`);
      expect(ed25519.verify(new Uint8Array(Buffer.from(params.get('signature') ?? '', 'base64url')), message, new Uint8Array(Buffer.from(PUBLIC_KEY, 'hex')))).toBe(true);
    });

    it("refuses the signature against Telegram's keys, a changed signature, and a missing one when required", () => {
      const raw = byTheBook(fields, BOT_TOKEN, PRIVATE_KEY);
      expect(problemOf(() => validateInitData(raw, { botToken: BOT_TOKEN, now: NOW }))).toBe('BAD_SIGNATURE');
      expect(problemOf(() => validateInitData(raw, { botToken: BOT_TOKEN, publicKey: TELEGRAM_PUBLIC_KEYS.test, now: NOW }))).toBe('BAD_SIGNATURE');
      // The signature is inside the HMAC, so changing it needs the token too: a forger with the token still cannot sign.
      const params = new URLSearchParams(raw);
      const signature = Buffer.from(params.get('signature') ?? '', 'base64url');
      signature[0] = (signature[0] ?? 0) ^ 1;
      const tampered = byTheBook({ ...fields, signature: signature.toString('base64url') });
      expect(problemOf(() => validateInitData(tampered, { botToken: BOT_TOKEN, publicKey: PUBLIC_KEY, now: NOW }))).toBe('BAD_SIGNATURE');
      const unsigned = byTheBook(fields);
      expect(problemOf(() => validateInitData(unsigned, { botToken: BOT_TOKEN, publicKey: PUBLIC_KEY, now: NOW, requireSignature: true }))).toBe('BAD_SIGNATURE');
    });

    it('takes an empty signature field for an absent one: stale data is stale, fresh data passes unsigned', () => {
      const stale = byTheBook({ ...fields, auth_date: String(NOW - 7200), signature: '' });
      expect(problemOf(() => validateInitData(stale, { botToken: BOT_TOKEN, publicKey: PUBLIC_KEY, now: NOW }))).toBe('EXPIRED');
      const fresh = byTheBook({ ...fields, signature: '' });
      expect(validateInitData(fresh, { botToken: BOT_TOKEN, publicKey: PUBLIC_KEY, now: NOW }).signed).toBe(false);
      expect(problemOf(() => validateInitData(fresh, { botToken: BOT_TOKEN, publicKey: PUBLIC_KEY, now: NOW, requireSignature: true }))).toBe('BAD_SIGNATURE');
    });

    it('signs init data the way the validator and the documentation agree on', () => {
      const raw = signInitData({ user, authDate: NOW - 5, queryId: 'q1' }, { botToken: BOT_TOKEN, privateKey: PRIVATE_KEY });
      expect(validateInitData(raw, { botToken: BOT_TOKEN, publicKey: PUBLIC_KEY, now: NOW, requireSignature: true }).user.id).toBe(user.id);
      const params = Object.fromEntries(new URLSearchParams(raw));
      const { hash, signature, ...rest } = params;
      expect(byTheBook(rest, BOT_TOKEN, PRIVATE_KEY)).toBe(new URLSearchParams({ ...rest, signature: signature ?? '', hash: hash ?? '' }).toString());
    });
  });
});
