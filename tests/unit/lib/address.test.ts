import { describe, expect, it } from 'vitest';
import { addressGroups, isAddressShapeValid, shortenAddress } from '../../../src/lib/address.ts';

const valid = {
  BITCOIN: ['bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', 'BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy'],
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
        expect(isAddressShapeValid(network, address, 'mainnet'), `${network} ${address}`).toBe(true);
        expect(isAddressShapeValid('ALL', address, 'mainnet'), `ALL ${address}`).toBe(true);
      }
    }
    expect(isAddressShapeValid('TRON', valid.ETHEREUM[0], 'mainnet')).toBe(false);
    expect(isAddressShapeValid('BITCOIN', valid.TRON[0], 'mainnet')).toBe(false);
    expect(isAddressShapeValid('DOGECOIN', valid.BITCOIN[1], 'mainnet')).toBe(false);
    expect(isAddressShapeValid('ETHEREUM', '0x123', 'mainnet')).toBe(false);
    expect(isAddressShapeValid('ALL', 'hello', 'mainnet')).toBe(false);
  });

  it('takes test and regtest forms exactly under their CHAIN_ENV', () => {
    const testnet = ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', '2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc'];
    for (const address of testnet) {
      expect(isAddressShapeValid('BITCOIN', address, 'testnet'), address).toBe(true);
      expect(isAddressShapeValid('BITCOIN', address, 'mainnet'), address).toBe(false);
    }
    expect(isAddressShapeValid('BITCOIN', 'bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pq0xeyq', 'regtest')).toBe(true);
    expect(isAddressShapeValid('BITCOIN', 'BCRT1Q6RZ28MCFAXTMD6V789L9RRLRUSDPRR9PQ0XEYQ', 'regtest')).toBe(true);
    expect(isAddressShapeValid('BITCOIN', 'bcrt1Q6rz28mcfaxtmd6v789l9rrlrusdprr9pq0xeyq', 'regtest')).toBe(false);
    expect(isAddressShapeValid('BITCOIN', valid.BITCOIN[0], 'regtest')).toBe(false);
    expect(isAddressShapeValid('LITECOIN', 'rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqxyp3q9', 'regtest')).toBe(true);
    expect(isAddressShapeValid('LITECOIN', 'rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqxyp3q9', 'testnet')).toBe(false);
    expect(isAddressShapeValid('LITECOIN', valid.LITECOIN[0], 'regtest')).toBe(false);
    expect(isAddressShapeValid('DOGECOIN', 'nbMFaHF9pjNoohS4fD1jefKBgDnETK9uPu', 'testnet')).toBe(true);
    expect(isAddressShapeValid('DOGECOIN', valid.DOGECOIN[0], 'testnet')).toBe(false);
    expect(isAddressShapeValid('TON', '0QAzWZa6nM5mJev91wGc7VCSfBoIsYRqKJpV78N8Add9-Vfd', 'testnet')).toBe(true);
    expect(isAddressShapeValid('TON', valid.TON[0], 'testnet')).toBe(false);
    expect(isAddressShapeValid('TON', valid.TON[2], 'testnet')).toBe(true);
    expect(isAddressShapeValid('ETHEREUM', valid.ETHEREUM[0], 'regtest')).toBe(true);
    expect(isAddressShapeValid('ALL', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'testnet')).toBe(true);
    expect(isAddressShapeValid('ALL', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'mainnet')).toBe(false);
  });

  it('uses the Ethereum-style pattern for a network it does not know', () => {
    expect(isAddressShapeValid('POLYGON', valid.ETHEREUM[0], 'mainnet')).toBe(true);
    expect(isAddressShapeValid('POLYGON', valid.TRON[0], 'mainnet')).toBe(false);
  });

  it('shortens to the first part, dots and the last 4 (15 characters)', () => {
    expect(shortenAddress('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).toBe('bc1qcr8t...6fyu');
    expect(shortenAddress('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).toHaveLength(15);
    expect(shortenAddress('short')).toBe('short');
  });
});

describe('an address as the wallet sets it (issue 33 item 4)', () => {
  const text = (groups: ReturnType<typeof addressGroups>) => groups.map((group) => group.map((part) => part.text).join(''));
  const strong = (groups: ReturnType<typeof addressGroups>) => groups.flatMap((group) => group.filter((part) => part.strong).map((part) => part.text)).join('|');

  it('groups by four and emphasises the first and last four characters, each a group, never changing one', () => {
    const address = 'EQD4FPq-PRDieyQKkizFTRtSDyucUIqrj0v_zXJmqaDp6_0t';
    const groups = addressGroups(address);
    expect(text(groups)).toEqual(['EQD4', 'FPq-', 'PRDi', 'eyQK', 'kizF', 'TRtS', 'Dyuc', 'UIqr', 'j0v_', 'zXJm', 'qaDp', '6_0t']);
    expect(strong(groups)).toBe('EQD4|6_0t');
  });

  it('keeps the last four a group where the length is not a multiple of four: the group before it is shorter', () => {
    const address = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
    const groups = addressGroups(address);
    expect(text(groups)).toEqual(['bcrt', '1qw5', '08d6', 'qejx', 'tdg4', 'y5r3', 'zarv', 'ary0', 'c5xw', '7kyg', 't080']);
    const tron = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
    expect(text(addressGroups(tron)).slice(-3)).toEqual(['8Ray', '5w', 'YjU7']);
    expect(text(addressGroups(tron)).join('')).toBe(tron);
    expect(strong(addressGroups(tron))).toBe('TLa2|YjU7');
  });

  it("keeps SPEC §9's shortening in the same groups", () => {
    const address = '0x52908400098527886E0F7030069857D2E4169EE7';
    const groups = addressGroups(address, true);
    expect(text(groups)).toEqual(['0x52', '9084', '...', '9EE7']);
    expect(text(groups).join('')).toBe(shortenAddress(address));
    expect(strong(groups)).toBe('0x52|9EE7');
    expect(text(addressGroups('short', true))).toEqual(['short']);
  });
});
