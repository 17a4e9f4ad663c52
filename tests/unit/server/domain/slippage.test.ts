import { describe, expect, it } from 'vitest';
import { unitsOf } from '../../../../src/lib/money.ts';
import { honoursFixedRate } from '../../../../src/server/domain/slippage.ts';
import { MAX_SLIPPAGE_BPS } from '../../../../src/lib/slippage.ts';
import { quoteBySource, quoteByDestination, quoteHolds } from '../../../../src/server/domain/swaps/rules.ts';

const PRICE = 10n ** 8n;
const side = (usd: bigint, decimals: number) => ({ price: usd, decimals });
const btcAt = (usd: number) => side(BigInt(Math.round(usd * 100)) * (PRICE / 100n), 8);
const usdt = side(PRICE, 6);

describe('a fixed rate is honoured only within the slippage against the desk (issue 14 item 11)', () => {
  it('honours a current value down to quoted × (1 − slippage), and any rise', () => {
    expect(honoursFixedRate(10_000n, 10_000n, 100)).toBe(true);
    expect(honoursFixedRate(10_000n, 9_900n, 100)).toBe(true);
    expect(honoursFixedRate(10_000n, 9_899n, 100)).toBe(false);
    // A move in the user's disfavour is the desk's gain: honoured however large.
    expect(honoursFixedRate(10_000n, 20_000n, 0)).toBe(true);
    // No slippage: any fall refuses.
    expect(honoursFixedRate(10_000n, 9_999n, 0)).toBe(false);
    expect(honoursFixedRate(10_000n, 10_000n, 0)).toBe(true);
  });

  it('refuses a slippage it cannot mean', () => {
    expect(() => honoursFixedRate(1n, 1n, -1)).toThrow(RangeError);
    expect(() => honoursFixedRate(1n, 1n, MAX_SLIPPAGE_BPS + 1)).toThrow(RangeError);
    expect(() => honoursFixedRate(1n, 1n, 1.5)).toThrow(RangeError);
  });

  it('a swap quote holds at its own prices, by source and by destination, with no slippage at all', () => {
    const q = quoteBySource(unitsOf(1_000_000n), btcAt(65_000), usdt, 50);
    expect(quoteHolds(q, btcAt(65_000), usdt, 0)).toBe(true);
    const d = quoteByDestination(unitsOf(123_456_789n), btcAt(65_000), usdt, 50);
    expect(quoteHolds(d, btcAt(65_000), usdt, 0)).toBe(true);
  });

  it('BTC → USDT: refused once BTC fell more than the slippage, honoured within it or when BTC rose', () => {
    const q = quoteBySource(unitsOf(1_000_000n), btcAt(65_000), usdt, 50);
    expect(quoteHolds(q, btcAt(64_350), usdt, 100)).toBe(true); // −1.0 %
    expect(quoteHolds(q, btcAt(64_349), usdt, 100)).toBe(false);
    expect(quoteHolds(q, btcAt(62_000), usdt, 100)).toBe(false);
    expect(quoteHolds(q, btcAt(70_000), usdt, 100)).toBe(true);
  });

  it('USDT → BTC: the desk loses when BTC rose, so that is what refuses', () => {
    const q = quoteBySource(unitsOf(650_000_000n), usdt, btcAt(65_000), 50);
    expect(quoteHolds(q, usdt, btcAt(65_600), 100)).toBe(true); // +0.92 %
    expect(quoteHolds(q, usdt, btcAt(66_000), 100)).toBe(false); // +1.5 %
    expect(quoteHolds(q, usdt, btcAt(60_000), 100)).toBe(true);
  });

  it('without a current price for either side nothing holds', () => {
    const q = quoteBySource(unitsOf(1_000_000n), btcAt(65_000), usdt, 50);
    expect(quoteHolds(q, side(0n, 8), usdt, 100)).toBe(false);
    expect(quoteHolds(q, btcAt(65_000), side(0n, 6), 100)).toBe(false);
  });
});
