import { describe, expect, it } from 'vitest';
import { assertSameRequest, canonicalJson, requestHash } from '../../../../../src/server/domain/orders/idempotency.ts';
import { orderEntryKey, orderEntryKeySql, orderReference, depositEntryKey, depositReversalKey } from '../../../../../src/server/domain/orders/entry-keys.ts';

describe('the idempotency rule', () => {
  it('hashes one spelling of a request: keys sorted, bigints as strings, undefined left out', () => {
    expect(canonicalJson({ b: 1n, a: 'x', c: undefined, d: { z: null, y: [true] } })).toBe('{"a":"x","b":"1","d":{"y":[true],"z":null}}');
    expect(requestHash({ amount: 10n, currency: 'BTC' })).toBe(requestHash({ currency: 'BTC', amount: 10n }));
    expect(requestHash({ amount: 10n, currency: 'BTC' })).not.toBe(requestHash({ currency: 'BTC', amount: 11n }));
  });

  it('refuses another request under a key with IDEMPOTENCY_KEY_REUSED; a row without a hash is compared the old way', () => {
    expect(() => assertSameRequest('a', 'a')).not.toThrow();
    expect(() => assertSameRequest('a', 'b')).toThrow(expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED' }));
    expect(() => assertSameRequest(null, 'b', () => true)).not.toThrow();
    expect(() => assertSameRequest(null, 'b', () => false)).toThrow(expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED' }));
    expect(() => assertSameRequest(null, 'b')).toThrow(expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REUSED' }));
  });
});

describe('order entry keys', () => {
  it('keeps the strings existing databases hold', () => {
    const id = '00000000-0000-4000-8000-000000000001';
    expect(orderEntryKey('withdrawal', id, 'hold')).toBe(`withdrawal:hold:${id}`);
    expect(orderEntryKey('withdrawal', id, 'internal')).toBe(`withdrawal:internal:${id}`);
    expect(orderEntryKey('swap', id, 'confirm')).toBe(`swap:confirm:${id}`);
    expect(orderEntryKey('sell', id, 'release')).toBe(`sell:release:${id}`);
    expect(orderEntryKey('buy', id, 'credit')).toBe(`buy:credit:${id}`);
    expect(orderReference('swap', id)).toBe(`swap:${id}`);
    expect(orderEntryKeySql('withdrawal', 'settle', 'w.id')).toBe(`'withdrawal:settle:' || w.id`);
    expect(depositEntryKey('BITCOIN', 'ab', 2)).toBe('deposit:BITCOIN:ab:2');
    // A credit after a reversal and a revival is an entry of its own; the first keeps the key databases already hold.
    expect(depositEntryKey('BITCOIN', 'ab', 2, 0)).toBe('deposit:BITCOIN:ab:2');
    expect(depositEntryKey('BITCOIN', 'ab', 2, 1)).toBe('deposit:BITCOIN:ab:2#1');
    expect(depositReversalKey('BITCOIN', 'ab', 2, 1)).toBe('deposit-reversal:BITCOIN:ab:2#1');
  });
});
