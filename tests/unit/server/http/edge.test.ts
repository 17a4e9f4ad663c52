import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import { amount, decimalAmount, idempotencyKey } from '../../../../src/server/http/fields.ts';
import { jsonInput } from '../../../../src/server/http/json-input.ts';
import { createAccountOwners } from '../../../../src/server/http/account-owner.ts';
import { errorResponse } from '../../../../src/server/http/errors.ts';
import { UnauthorizedError, type AccessTokenVerifier } from '../../../../src/server/http/auth-middleware.ts';
import type { ApiEnv } from '../../../../src/server/http/context.ts';
import { createLogger } from '../../../../src/server/log.ts';
import { DomainError } from '../../../../src/server/domain/errors.ts';

const log = createLogger('silent');
const ALICE_ACCOUNT = '11111111-1111-4111-8111-111111111111';
const NOBODYS_ACCOUNT = '22222222-2222-4222-8222-222222222222';

describe('shared fields', () => {
  it('takes an amount as a decimal string (comma or point) or as a JSON number a double holds exactly', () => {
    expect(amount.parse(' 0,015 ')).toBe('0.015');
    expect(amount.parse('12345678.12345678')).toBe('12345678.12345678');
    expect(amount.parse(0.0005)).toBe('0.0005');
    expect(amount.parse(5e-7)).toBe('0.0000005');
    for (const bad of ['123456789', '0.123456789', '-1', '1e-3', 'lots', '', -1, 12345678.12345678, null, true]) expect(amount.safeParse(bad).success, String(bad)).toBe(false);
  });

  it('bounds the digits per field, with one way of reading the input', () => {
    const fiat = decimalAmount('fiatAmount is required', /^\d{1,12}(?:\.\d{1,2})?$/, 'at most 2 decimals');
    expect(fiat.parse('1500,50')).toBe('1500.50');
    expect(fiat.parse(2000)).toBe('2000');
    expect(fiat.safeParse('1.001').success).toBe(false);
    // A number a double does not hold exactly is refused, as for every amount.
    expect(fiat.safeParse(Number('90005022.93936635')).success).toBe(false);
  });

  it('takes an idempotency key of 8 to 100 characters, trimmed', () => {
    expect(idempotencyKey.parse('  12345678 ')).toBe('12345678');
    for (const bad of ['short', 'x'.repeat(101), 7, undefined]) expect(idempotencyKey.safeParse(bad).success, String(bad)).toBe(false);
  });
});

describe('the JSON body validator', () => {
  const app = new Hono<ApiEnv>();
  app.onError((error, c) => errorResponse(error, c, log));
  const schema = z.object({ idempotencyKey, amount, account: z.string().optional() });
  app.post('/:account/keyed', jsonInput(schema, { idempotencyKey: true, account: 'path' }), (c) => c.json(c.req.valid('json')));
  app.post('/plain', jsonInput(z.object({ amount: amount.optional() })), (c) => c.json(c.req.valid('json')));
  const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
    const response = await app.request(path, { method: 'POST', body, headers });
    return { status: response.status, body: (await response.json()) as unknown };
  };

  it('reads the key from the body, else from the Idempotency-Key header, with one message when neither has it', async () => {
    expect(await post('/a/keyed', '{"amount":"1","idempotencyKey":"body-key-1"}', { 'idempotency-key': 'header-key-1' })).toEqual({ status: 200, body: { amount: '1', idempotencyKey: 'body-key-1' } });
    expect(await post('/a/keyed', '{"amount":"1"}', { 'idempotency-key': ' header-key-1 ' })).toEqual({ status: 200, body: { amount: '1', idempotencyKey: 'header-key-1' } });
    expect(await post('/a/keyed', '{"amount":"1"}')).toEqual({
      status: 400,
      body: { exceptionCode: 'VALIDATION', message: 'idempotencyKey: give 8 to 100 characters in the body or the Idempotency-Key header' },
    });
  });

  it("refuses a body account that is not the path's", async () => {
    expect(await post('/a/keyed', '{"amount":"1","idempotencyKey":"body-key-1","account":"a"}')).toMatchObject({ status: 200 });
    expect(await post('/a/keyed', '{"amount":"1","idempotencyKey":"body-key-1","account":"b"}')).toEqual({
      status: 400,
      body: { exceptionCode: 'VALIDATION', message: 'account: differs from the account in the path' },
    });
  });

  it("keeps readJsonBody's rules whatever the content type: NUL, inexact numbers, not JSON, not an object; empty is {}", async () => {
    for (const body of ['{"amount":"a\\u0000"}', '{"amount":5e-4}', '{"amount":0.00050000000000000001}', '{"a":', 'null', '[]', '7']) {
      expect(await post('/plain', body, { 'content-type': 'text/plain' }), body).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    }
    expect(await post('/plain', '')).toEqual({ status: 200, body: {} });
    expect(await post('/plain', '{"amount":0.0005}', { 'content-type': 'application/json' })).toEqual({ status: 200, body: { amount: '0.0005' } });
  });
});

describe('the account-owner guard', () => {
  const verifier: AccessTokenVerifier = {
    verify: async (token) => {
      if (token === 'alice' || token === 'bob') return { userId: token, sub: token };
      throw new UnauthorizedError('The access token is not valid');
    },
    cached: () => undefined,
    forgetUser: () => {},
    revokeGrant: () => {},
  };
  const lookups: string[] = [];
  const pool = {
    query: async (query: { values: string[] }) => {
      lookups.push(query.values[0] ?? '');
      return { rows: query.values[0] === ALICE_ACCOUNT ? [{ userId: 'alice' }] : [] };
    },
  } as unknown as pg.Pool;
  const owners = createAccountOwners({ pool, auth: verifier });
  const app = new Hono<ApiEnv>();
  app.onError((error, c) => errorResponse(error, c, log));
  app.get('/:account/thing', owners.route, (c) => c.json({ ok: c.get('principal').userId }));
  const get = async (account: string, token?: string) => {
    const response = await app.request(`/${account}/thing`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: response.status, body: (await response.json()) as { exceptionCode?: string } };
  };

  it("lets the owner in, refuses anyone else's token with 403 whether the account exists or not, and no token with 401", async () => {
    expect(await get(ALICE_ACCOUNT, 'alice')).toEqual({ status: 200, body: { ok: 'alice' } });
    expect(await get(ALICE_ACCOUNT, 'bob')).toMatchObject({ status: 403, body: { exceptionCode: 'FORBIDDEN' } });
    expect(await get(NOBODYS_ACCOUNT, 'alice')).toMatchObject({ status: 403, body: { exceptionCode: 'FORBIDDEN' } });
    expect(await get('not-a-uuid', 'alice')).toMatchObject({ status: 403, body: { exceptionCode: 'FORBIDDEN' } });
    expect(await get(ALICE_ACCOUNT)).toMatchObject({ status: 401, body: { exceptionCode: 'UNAUTHORIZED' } });
    expect(await get(ALICE_ACCOUNT, 'mallory')).toMatchObject({ status: 401 });
  });

  it('asks the database once per known account and never for an id that is not a UUID', async () => {
    lookups.length = 0;
    await get(ALICE_ACCOUNT, 'alice');
    await get(ALICE_ACCOUNT, 'bob');
    await get('not-a-uuid', 'alice');
    expect(lookups).toEqual([]);
    await expect(owners.ensure(ALICE_ACCOUNT, 'bob')).rejects.toBeInstanceOf(DomainError);
  });
});

describe('messages in the user language', () => {
  it('words the passcode refusals from the facts the domain gives; every other error keeps its message in English', async () => {
    const { userMessage } = await import('../../../../src/server/http/messages.ts');
    expect(userMessage(new DomainError('B2C_USM0031', 'Incorrect pin code'), 'RUS')).toBe('Неверный пин-код');
    expect(userMessage(new DomainError('B2C_USM0030', 'wait', { details: { waitSeconds: 90 } }), 'RUS')).toBe('Слишком много неверных пин-кодов. Повторите через 2 мин');
    expect(userMessage(new DomainError('B2C_USM0030', 'wait', { details: { waitSeconds: 29.2 } }), 'ENG')).toBe('Too many wrong pin codes. Try again in 30 s');
    expect(userMessage(new DomainError('B2C_USM0032', 'blocked'), 'ENG')).toBe('The pin code is blocked. Reset it through your e-mail');
    expect(userMessage(new DomainError('EMAIL_TAKEN', 'An account with this e-mail already exists'), 'ENG')).toBe('An account with this e-mail already exists');
    expect(userMessage(new DomainError('EMAIL_TAKEN', 'An account with this e-mail already exists'), 'RUS')).toBe('Аккаунт с этим адресом уже есть.');
    // The facts a text names come from the details; without them the English message, never a bare placeholder.
    expect(userMessage(new DomainError('SWAP_MIN_LIMIT', 'Min amount limit is: 0.0002 BTC', { details: { amount: '0.0002', currency: 'BTC' } }), 'RUS')).toBe('Минимальная сумма: 0.0002 BTC');
    expect(userMessage(new DomainError('SWAP_MIN_LIMIT', 'Min amount limit is: 0.0002 BTC'), 'RUS')).toBe('Min amount limit is: 0.0002 BTC');
  });

  it('picks the language: the refusal\'s own, the account\'s, the device\'s cookie, Accept-Language, else English', async () => {
    const { acceptedLanguage } = await import('../../../../src/server/http/messages.ts');
    expect(acceptedLanguage('ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7')).toBe('RUS');
    expect(acceptedLanguage('de-DE,de;q=0.9,en;q=0.5,ru;q=0.4')).toBe('ENG');
    expect(acceptedLanguage('en;q=0.3, ru;q=0.8')).toBe('RUS');
    expect(acceptedLanguage('ru;q=0, fr')).toBeUndefined();
    expect(acceptedLanguage(undefined)).toBeUndefined();

    const app = new Hono<ApiEnv>();
    const languages: Record<string, 'ENG' | 'RUS'> = { ivan: 'RUS', jane: 'ENG' };
    app.onError((error, c) => errorResponse(error, c, log, async (userId) => languages[userId]));
    app.use('/as/:user/*', async (c, next) => {
      c.set('principal', { userId: c.req.param('user'), sub: c.req.param('user') });
      await next();
    });
    const taken = () => {
      throw new DomainError('EMAIL_TAKEN', 'An account with this e-mail already exists');
    };
    app.get('/as/:user/taken', taken);
    app.get('/taken', taken);
    app.post('/json', jsonInput(z.object({ amount })), (c) => c.json(c.req.valid('json')));
    const message = async (path: string, headers: Record<string, string> = {}) => ((await (await app.request(path, { headers })).json()) as { message: string }).message;
    const russian = 'Аккаунт с этим адресом уже есть.';
    const english = 'An account with this e-mail already exists';
    // Signed in, the account's language wins over what the browser says.
    expect(await message('/as/ivan/taken', { 'accept-language': 'en' })).toBe(russian);
    expect(await message('/as/jane/taken', { 'accept-language': 'ru', cookie: 'lang=RUS' })).toBe(english);
    // Before sign-in: the language chosen on the device, then the browser's.
    expect(await message('/taken', { cookie: 'lang=RUS', 'accept-language': 'en' })).toBe(russian);
    expect(await message('/taken', { 'accept-language': 'ru-RU,ru;q=0.9' })).toBe(russian);
    expect(await message('/taken')).toBe(english);
    // A body the gateway cannot read is refused in Russian too.
    const refused = await app.request('/json', { method: 'POST', body: '{', headers: { 'content-type': 'application/json', 'accept-language': 'ru' } });
    expect(await refused.json()).toMatchObject({ exceptionCode: 'VALIDATION', message: expect.stringMatching(/[а-я]/) });
  });

  it('answers a passcode lockout with Retry-After, so the prompt can count the wait down', async () => {
    const { pincodeWait } = await import('../../../../src/server/domain/pincode.ts');
    const app = new Hono<ApiEnv>();
    app.onError((error, c) => errorResponse(error, c, log));
    app.get('/locked', () => {
      throw pincodeWait(29.2, 'ENG');
    });
    const response = await app.request('/locked');
    expect([response.status, response.headers.get('retry-after')]).toEqual([429, '30']);
  });
});
