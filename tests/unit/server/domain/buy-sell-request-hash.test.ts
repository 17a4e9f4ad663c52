import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { fieldOrderHash, requestHash } from '../../../../src/server/domain/orders/idempotency.ts';

/**
 * Buy and sell stored request_hash before the order module: sha256 of JSON.stringify with the fields in their own
 * order. Rows written then must still replay, so these flows keep that spelling (requestHash sorts the keys).
 */
describe('the request hash of buy and sell orders', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');

  it('is the one stored before, fields in their order', () => {
    const buy = { rateId: '3f1c2a9e-0000-4000-8000-000000000001', itemId: 'item', description: 'Buy USDC', returnUrl: 'http://localhost/buy', fiatCents: '10000' };
    expect(fieldOrderHash(buy)).toBe(sha('{"rateId":"3f1c2a9e-0000-4000-8000-000000000001","itemId":"item","description":"Buy USDC","returnUrl":"http://localhost/buy","fiatCents":"10000"}'));
    const sell = { kind: 'byCard', token: 'tok', saveCard: true, currency: 'BTC', fiatCurrency: 'RUB', rateId: 'r', fiatAmount: '5000' };
    expect(fieldOrderHash(sell)).toBe(sha('{"kind":"byCard","token":"tok","saveCard":true,"currency":"BTC","fiatCurrency":"RUB","rateId":"r","fiatAmount":"5000"}'));
  });

  it('differs from the sorted requestHash, which is why those flows do not use it', () => {
    const fields = { rateId: 'r', itemId: 'i' };
    expect(fieldOrderHash(fields)).not.toBe(requestHash(fields));
  });
});
