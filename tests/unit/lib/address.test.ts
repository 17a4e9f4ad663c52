import { describe, expect, it } from 'vitest';
import { isAddressShapeValid, shortenAddress } from '../../../src/lib/address.ts';

const valid = {
  BITCOIN: ['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'],
  ETHEREUM: ['0x9858EfFD232B4033E47d90003D41EC34EcaEda94', '0x9858effd232b4033e47d90003d41ec34ecaeda94'],
  TRON: ['TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH'],
  LITECOIN: ['ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', 'LaMT348PWRnrqeeWArpwQPbuanpXDZGEUz'],
  DOGECOIN: ['DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC'],
  TON: ['UQAzWZa6nM5mJev91wGc7VCSfBoIsYRqKJpV78N8Add9-RKY', 'EQAzWZa6nM5mJev91wGc7VCSfBoIsYRqKJpV78N8Add9-U9d', `0:${'ab'.repeat(32)}`],
} as const;

describe('address shapes (SPEC §5)', () => {
  it('accepts each network its own forms and refuses the others', () => {
    for (const [network, addresses] of Object.entries(valid)) {
      for (const address of addresses) {
        expect(isAddressShapeValid(network, address), `${network} ${address}`).toBe(true);
        expect(isAddressShapeValid('ALL', address), `ALL ${address}`).toBe(true);
      }
    }
    expect(isAddressShapeValid('TRON', valid.ETHEREUM[0])).toBe(false);
    expect(isAddressShapeValid('BITCOIN', valid.TRON[0])).toBe(false);
    expect(isAddressShapeValid('DOGECOIN', valid.BITCOIN[1])).toBe(false);
    expect(isAddressShapeValid('ETHEREUM', '0x123')).toBe(false);
    expect(isAddressShapeValid('ALL', 'hello')).toBe(false);
  });

  it('uses the Ethereum-style pattern for a network it does not know', () => {
    expect(isAddressShapeValid('POLYGON', valid.ETHEREUM[0])).toBe(true);
    expect(isAddressShapeValid('POLYGON', valid.TRON[0])).toBe(false);
  });

  it('shortens to the first part, dots and the last 4 (15 characters)', () => {
    expect(shortenAddress('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).toBe('bc1qcr8t...6fyu');
    expect(shortenAddress('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).toHaveLength(15);
    expect(shortenAddress('short')).toBe('short');
  });
});
