import { describe, expect, it } from 'vitest';
import { cryptoFor, fiatFor, limitMessage } from '../../../../src/server/domain/buy/rules.ts';
import { cardProblem, SANDBOX_CARDS } from '../../../../src/server/adapters/card/sandbox.ts';
import { backoffMs } from '../../../../src/server/adapters/webhooks/delivery.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

const RATE = 101_500_000n; // 1.015 fiat per coin, 8 decimals

describe('buy amounts', () => {
  it('buys coins for cents at the fixed rate, rounded down, never past 8 decimals', () => {
    expect(cryptoFor(10_000n, RATE, 6)).toBe(98_522_167n);
    expect(cryptoFor(0n, RATE, 6)).toBe(0n);
    // 18-decimal coins keep 8 decimals: the last 10 digits are zeros.
    expect(cryptoFor(10_000n, 320_000_000_000n, 18) % 10n ** 10n).toBe(0n);
    expect(cryptoFor(1n, 0n, 6)).toBe(0n);
  });
  it('prices coins in cents, rounded up, so the cents always buy at least the coins', () => {
    expect(fiatFor(unitsOf(50_000_000n), RATE, 6)).toBe(5_075n);
    for (const units of [1n, 98_522_167n, 123_456_789n]) expect(cryptoFor(fiatFor(unitsOf(units), RATE, 6), RATE, 6) >= units).toBe(true);
  });
  it('words the limits as SPEC §5 does', () => {
    expect(limitMessage('10', '5000', 'USD')).toBe('Min 10 - max 5000 USD');
  });
});

describe('the sandbox card form', () => {
  const now = new Date('2026-06-15T00:00:00Z');
  it('takes the test cards with a future expiry and a CVC', () => {
    for (const card of Object.values(SANDBOX_CARDS)) expect(cardProblem(card, '12/30', '123', now)).toBeNull();
    expect(cardProblem(SANDBOX_CARDS.paid, '06/26', '1234', now)).toBeNull();
  });
  it('refuses bad numbers, expiries and CVCs, and cards that are not test cards', () => {
    expect(cardProblem('4242424242424241', '12/30', '123', now)).toMatch(/not valid/);
    expect(cardProblem('424242424242', '12/30', '123', now)).toMatch(/not valid/);
    expect(cardProblem(SANDBOX_CARDS.paid, '13/30', '123', now)).toMatch(/MM\/YY/);
    expect(cardProblem(SANDBOX_CARDS.paid, '05/26', '123', now)).toMatch(/expired/);
    expect(cardProblem(SANDBOX_CARDS.paid, '12/30', '12', now)).toMatch(/CVC/);
    expect(cardProblem('4111111111111111', '12/30', '123', now)).toMatch(/test cards/);
  });
});

describe('webhook retry backoff', () => {
  it('doubles from the base up to the cap, with at most ±10% jitter', () => {
    const none = () => 0;
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 1000, 300_000, none))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(20, 1000, 300_000, none)).toBe(300_000);
    expect(backoffMs(1000, 1000, 300_000, none)).toBe(300_000);
    for (let i = 0; i < 50; i += 1) {
      const wait = backoffMs(3, 1000, 300_000);
      expect(wait).toBeGreaterThanOrEqual(3600);
      expect(wait).toBeLessThanOrEqual(4400);
    }
  });
});
