// The one row reader for amount columns (src/server/db/amounts.ts) and the Units brand it returns (src/lib/money.ts).
import { describe, expect, expectTypeOf, it } from 'vitest';
import { addUnits, money, negateUnits, subtractUnits, sumUnits, unitsOf, type Units } from '../../../../src/lib/money.ts';
import type { Posting } from '../../../../src/server/domain/ledger.ts';
import type { FeeEstimate, WithdrawalOrder } from '../../../../src/server/adapters/chains/port.ts';
import type { PayoutRequest } from '../../../../src/server/adapters/payout/port.ts';
import { unitsFromRow, unitsFromRowOrZero } from '../../../../src/server/db/amounts.ts';

describe('unitsFromRow', () => {
  it('reads numeric text as the same bigint BigInt() gave', () => {
    expect(unitsFromRow('1500000')).toBe(1500000n);
    expect(unitsFromRow('-42', 'fee')).toBe(-42n);
    expect(unitsFromRow('123456789012345678901234567890')).toBe(123456789012345678901234567890n);
    expect(unitsFromRow(7n)).toBe(7n);
  });

  it('refuses a non-integer, naming the column', () => {
    expect(() => unitsFromRow('1.5', 'fee')).toThrow(new RangeError('fee: "1.5" is not a whole number of atomic units'));
    expect(() => unitsFromRow('')).toThrow(RangeError);
    expect(() => unitsFromRow('1e3')).toThrow(RangeError);
  });

  it('reads NULL as zero only when asked', () => {
    expect(unitsFromRowOrZero(null)).toBe(0n);
    expect(unitsFromRowOrZero(undefined)).toBe(0n);
    expect(unitsFromRowOrZero('9')).toBe(9n);
  });
});

describe('Units', () => {
  it('is a plain bigint at run time', () => {
    const btc = unitsOf<'BTC'>(5n);
    expect(typeof btc).toBe('bigint');
    expect(addUnits(btc, unitsOf<'BTC'>(2n))).toBe(7n);
    expect(subtractUnits(btc, unitsOf<'BTC'>(2n))).toBe(3n);
  });

  it('does not mix two known currencies, and a plain bigint is no Units', () => {
    const btc = unitsOf<'BTC'>(5n);
    const usdt = unitsOf<'USDT'>(5n);
    // @ts-expect-error: BTC units plus USDT units
    addUnits(btc, usdt);
    // @ts-expect-error: a bare bigint is not branded
    const bare: Units = 5n;
    expect(bare).toBe(5n);
    expectTypeOf(addUnits(btc, btc)).toEqualTypeOf<Units<'BTC'>>();
    expectTypeOf(btc).toMatchTypeOf<bigint>();
  });

  it('negates and sums within one currency', () => {
    const btc = unitsOf<'BTC'>(5n);
    expect(negateUnits(btc)).toBe(-5n);
    expect(sumUnits([btc, unitsOf<'BTC'>(2n), unitsOf<'BTC'>(3n)])).toBe(10n);
    expect(sumUnits<'BTC'>([])).toBe(0n);
    expectTypeOf(negateUnits(btc)).toEqualTypeOf<Units<'BTC'>>();
    // @ts-expect-error: BTC units summed with USDT units are no BTC amount
    const mixed: Units<'BTC'> = sumUnits([btc, unitsOf<'USDT'>(1n)]);
    expect(mixed).toBe(6n);
  });

  it('is what Money and a ledger posting carry: a plain bigint goes in through unitsOf or the row reader only', () => {
    const posting: Posting = { account: 'a', currency: 'BTC', bucket: 'AVAILABLE', amount: unitsFromRow('5') };
    expect(posting.amount).toBe(5n);
    // @ts-expect-error: a bare bigint is no posting's amount
    const bare: Posting = { account: 'a', currency: 'BTC', bucket: 'AVAILABLE', amount: 5n };
    // @ts-expect-error: nor Money's units
    expect(() => money('XYZ', 5n)).toThrow('unknown currency XYZ');
    expect(bare.amount).toBe(5n);
  });

  it('is what the chain and payment ports carry too: an order, a fee, a transfer or a payout of a plain bigint does not compile', () => {
    const order: WithdrawalOrder = { reference: 'w', network: 'LITECOIN', currency: 'LTC', toAddress: 'x', amount: unitsOf(5n) };
    // @ts-expect-error: a bare bigint is no withdrawal's amount
    const bareOrder: WithdrawalOrder = { ...order, amount: 5n };
    // @ts-expect-error: nor a fee estimate's
    const fee: FeeEstimate = { network: 'LITECOIN', currency: 'LTC', amount: 1n };
    // @ts-expect-error: nor a payout's
    const payout: PayoutRequest = { reference: 'p', token: 't', currency: 'RUB', amount: 100n };
    expect([order.amount, bareOrder.amount, fee.amount, payout.amount]).toEqual([5n, 5n, 1n, 100n]);
  });
});
