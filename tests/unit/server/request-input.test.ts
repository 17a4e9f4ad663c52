import { describe, expect, it } from 'vitest';
import { isExactNumberToken, jsonNumberAmount, plainNumber } from '../../../src/server/http/json-amount.ts';
import { parseJsonBody } from '../../../src/server/http/json-body.ts';
import { DomainError } from '../../../src/server/domain/errors.ts';
import { statusOf } from '../../../src/server/http/errors.ts';
import { bodyLimitFor, BODY_LIMITS } from '../../../src/server/http/body-limit.ts';
import { isDatabaseUnavailable } from '../../../src/server/db/database.ts';

const refusal = (text: string) => {
  try {
    parseJsonBody(text);
  } catch (error) {
    return error instanceof DomainError ? { status: statusOf(error.code), code: error.code } : error;
  }
  return undefined;
};

describe('JSON request bodies', () => {
  it('keeps numbers written exactly, refuses exponents and digits a double loses', () => {
    for (const [token, value] of [['0.0005', 0.0005], ['100', 100], ['0.50', 0.5], ['007', 7], ['-3.25', -3.25], ['90005022.9393663', 90005022.9393663], ['0.0000005', 5e-7], ['0.00000012', 1.2e-7], ['1000000000000000000000', 1e21]] as const) expect(isExactNumberToken(token, value), token).toBe(true);
    for (const [token, value] of [['5e-4', 5e-4], ['5E-4', 5e-4], ['0.00050000000000000001', 0.0005], ['12345678901234567890', Number('12345678901234567890')], ['90005022.93936635', Number('90005022.93936635')], ['1e309', Infinity], ['-0', -0]] as const) expect(isExactNumberToken(token, value), token).toBe(false);
    expect(parseJsonBody('{"amount":0.0005,"n":[1,2.5]}')).toEqual({ amount: 0.0005, n: [1, 2.5] });
    expect(refusal('{"amount":5e-4}')).toEqual({ status: 400, code: 'VALIDATION' });
    expect(refusal('{"amount":0.00050000000000000001}')).toEqual({ status: 400, code: 'VALIDATION' });
  });

  it('writes doubles out in full, so an exact small amount is taken as its decimal', () => {
    expect([5e-7, 1.2e-7, 1e21, 1.5e22, 0.0005, 42].map(plainNumber)).toEqual(['0.0000005', '0.00000012', '1000000000000000000000', '15000000000000000000000', '0.0005', '42']);
    expect(jsonNumberAmount.parse(5e-7)).toBe('0.0000005');
  });

  it('refuses a NUL character in any text or key, and text that is not JSON, with 400', () => {
    expect(refusal('{"email":"a\\u0000b"}')).toEqual({ status: 400, code: 'VALIDATION' });
    expect(refusal('{"deep":{"list":["ok","\\u0000"]}}')).toEqual({ status: 400, code: 'VALIDATION' });
    expect(refusal('{"\\u0000":1}')).toEqual({ status: 400, code: 'VALIDATION' });
    expect(refusal('{"a":')).toEqual({ status: 400, code: 'VALIDATION' });
    // An escaped backslash before u0000 is the text \u0000, not a NUL.
    expect(parseJsonBody('{"a":"\\\\u0000"}')).toEqual({ a: '\\u0000' });
  });
});

describe('body limits by path', () => {
  it('gives webhooks what providers send, /oidc its forms, everything else the JSON size', () => {
    expect(bodyLimitFor('/api/webhooks/card')).toBe(BODY_LIMITS.webhook);
    expect(bodyLimitFor('/api/webhooks/payout')).toBe(BODY_LIMITS.webhook);
    expect(bodyLimitFor('/api/tg/webhook')).toBe(BODY_LIMITS.webhook);
    expect(bodyLimitFor('/oidc/token')).toBe(BODY_LIMITS.oidc);
    for (const path of ['/api/rate', '/api/user', '/api/webhooks/card/x', '/sandbox/card/pay/1', '/auth/login', '/oidcx']) expect(bodyLimitFor(path), path).toBe(BODY_LIMITS.json);
  });
});

describe('database unavailable', () => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
  it('recognises a lost or refused connection, a shutdown and a pool timeout, also wrapped', () => {
    for (const error of [coded('57P01'), coded('57P03'), coded('08006'), coded('ECONNREFUSED'), new Error('Connection terminated unexpectedly'), new Error('timeout exceeded when trying to connect'), new Error('Failed query', { cause: coded('57P01') }), new AggregateError([coded('ECONNREFUSED')])]) {
      expect(isDatabaseUnavailable(error), String(error)).toBe(true);
    }
    for (const error of [coded('23505'), coded('22021'), new Error('boom'), 'text', undefined]) expect(isDatabaseUnavailable(error), String(error)).toBe(false);
  });
});
