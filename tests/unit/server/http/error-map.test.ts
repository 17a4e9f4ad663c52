import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { DomainError, ERROR_CODES } from '../../../../src/server/domain/errors.ts';
import { LedgerError } from '../../../../src/server/domain/ledger.ts';
import { errorResponse, statusOf } from '../../../../src/server/http/errors.ts';
import { createLogger } from '../../../../src/server/log.ts';

/** Issue 34 item 3: every code has one status, from one map, and a refusal that escapes a flow is never a 500 by accident. */
async function answer(error: unknown): Promise<{ status: number; body: { exceptionCode: string; message: string } }> {
  const app = new Hono();
  app.onError((thrown, c) => errorResponse(thrown, c, createLogger('silent')));
  app.get('/', () => Promise.reject(error));
  const response = await app.request('/');
  return { status: response.status, body: (await response.json()) as { exceptionCode: string; message: string } };
}

describe('the gateway\'s error map', () => {
  it('gives every code a status of its kind, and only our own faults a 5xx other than unavailability', () => {
    for (const [code, kind] of Object.entries(ERROR_CODES)) {
      const status = statusOf(code as keyof typeof ERROR_CODES);
      expect(status, code).toBeGreaterThanOrEqual(400);
      if (status >= 500) expect(['fault', 'unavailable'], code).toContain(kind);
    }
    expect(statusOf('SWAP_QUOTE_EXPIRED')).toBe(410);
    expect(statusOf('B2C_USM0032')).toBe(423);
    expect(statusOf('IDEMPOTENCY_KEY_REUSED')).toBe(422);
  });

  it('answers a refusal thrown anywhere with its code\'s status', async () => {
    expect(await answer(new DomainError('WITHDRAWAL_DAILY_LIMIT', 'over the limit'))).toMatchObject({ status: 403, body: { exceptionCode: 'WITHDRAWAL_DAILY_LIMIT' } });
    expect(await answer(new DomainError('UNAUTHORIZED', 'no token'))).toMatchObject({ status: 401, body: { exceptionCode: 'UNAUTHORIZED' } });
  });

  it('answers a ledger refusal that escaped its flow: a lost race for funds is a 409, a broken invariant an INTERNAL 500 that names nothing', async () => {
    expect(await answer(new LedgerError('INSUFFICIENT_FUNDS', 'Not enough funds'))).toMatchObject({ status: 409, body: { exceptionCode: 'LEDGER_INSUFFICIENT_FUNDS' } });
    const broken = await answer(new LedgerError('UNBALANCED', 'entry x does not sum to zero in BTC'));
    expect(broken).toEqual({ status: 500, body: { exceptionCode: 'INTERNAL', message: 'Something went wrong' } });
  });
});
