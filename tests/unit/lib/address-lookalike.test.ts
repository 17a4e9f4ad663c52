import { describe, expect, it } from 'vitest';
import { lookalikeOf, looksAlike, sameAddress } from '../../../src/lib/address-lookalike.ts';

const ETH = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
/** The same first 4 and last 4 hex digits after 0x, another middle. */
const ETH_POISON = '0x985800000000000000000000000000000000da94';

describe('lookalike addresses (issue 36 item 3)', () => {
  it('warns of a hex address sharing both ends, whatever the case of either', () => {
    expect(looksAlike(ETH_POISON, ETH)).toBe(true);
    expect(looksAlike(ETH_POISON.toUpperCase().replace('0X', '0x'), ETH.toLowerCase())).toBe(true);
    expect(looksAlike(`0:${'ab'.repeat(4)}${'00'.repeat(24)}${'cd'.repeat(4)}`, `0:${'AB'.repeat(4)}${'11'.repeat(24)}${'CD'.repeat(4)}`)).toBe(true);
  });

  it('takes the same hex address in another case as the same, not a lookalike', () => {
    expect(looksAlike(ETH.toLowerCase(), ETH)).toBe(false);
    expect(sameAddress(ETH.toLowerCase(), ETH)).toBe(true);
    expect(lookalikeOf(ETH.toLowerCase(), [ETH_POISON, ETH])).toBeUndefined();
  });

  it('needs both ends: one end alike, or three characters at an end, is no warning', () => {
    expect(looksAlike('0x9858000000000000000000000000000000001111', ETH)).toBe(false);
    expect(looksAlike('0x1111000000000000000000000000000000000da94', ETH)).toBe(false);
    // 985 and a94 alike, the fourth characters differ.
    expect(looksAlike('0x9850000000000000000000000000000000000a94', ETH)).toBe(false);
  });

  it('does not count the characters every address of a form begins with', () => {
    // Both start 0x and bc1q: the shared part starts after them.
    expect(looksAlike('0x0000000000000000000000000000000000000000', '0x0000111111111111111111111111111111110001')).toBe(false);
    expect(looksAlike('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'bc1qaaaaqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq6fyu')).toBe(false);
    expect(looksAlike('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'bc1qcr8tqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq6fyu')).toBe(true);
    // Another witness version (bc1p) or base58 version (1… against 3…) is another form: it does not look the same.
    expect(looksAlike('bc1pcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'bc1qcr8tqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq6fyu')).toBe(false);
    expect(looksAlike('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '3BvBMaaaaaaaaaaaaaaaaaaaaaaaaaNVN2')).toBe(false);
  });

  it('compares base58 and bech32 exactly', () => {
    expect(looksAlike('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', 'TUEZSaaaaaaaaaaaaaaaaaaaaaaaaaWYdH')).toBe(true);
    // Base58 is case-sensitive: tuez is not UEZS.
    expect(looksAlike('TuezsdKsoDHQMeZwihtdoBiN46zxhGWYdH', 'TUEZSaaaaaaaaaaaaaaaaaaaaaaaaaWYdH')).toBe(false);
    expect(looksAlike('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '1BvBMaaaaaaaaaaaaaaaaaaaaaaaaaNVN2')).toBe(true);
    expect(looksAlike('BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU', 'bc1qcr8tqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq6fyu')).toBe(false);
    expect(sameAddress('BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).toBe(false);
  });

  it('reads TON user-friendly addresses after their flags', () => {
    expect(looksAlike('UQAzWZa6nM5mJev91wGc7VCSfBoIsYRqKJpV78N8Add9-RKY', 'UQAzWZaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa9-RKY')).toBe(true);
    // The same wallet bounceable: other flags, another checksum.
    expect(looksAlike('UQAzWZa6nM5mJev91wGc7VCSfBoIsYRqKJpV78N8Add9-RKY', 'EQAzWZa6nM5mJev91wGc7VCSfBoIsYRqKJpV78N8Add9-U9d')).toBe(false);
  });

  it('the same address is never a warning', () => {
    for (const address of [ETH, 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', ' 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2 ']) {
      expect(looksAlike(address, address.trim())).toBe(false);
      expect(lookalikeOf(address, [address.trim()])).toBeUndefined();
    }
  });

  it('an address too short to have a middle is never a lookalike', () => {
    expect(looksAlike('0x12345678', '0x12345678')).toBe(false);
    expect(looksAlike('0x123456789', '0x1234a6789')).toBe(true);
    expect(looksAlike('0x12340678', '0x12341678')).toBe(false);
    expect(looksAlike('T12345678', 'T12345678')).toBe(false);
    expect(looksAlike('', '')).toBe(false);
    expect(looksAlike('T1', 'T2')).toBe(false);
  });

  it('names the first known address the typed one looks like', () => {
    expect(lookalikeOf(ETH_POISON, ['0x1111000000000000000000000000000000000000', ETH])).toBe(ETH);
    expect(lookalikeOf(ETH_POISON, [])).toBeUndefined();
  });
});
