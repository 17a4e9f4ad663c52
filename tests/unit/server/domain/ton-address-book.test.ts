import { describe, expect, it } from 'vitest';
import { Address } from '@ton/core';
import { bookAddress, canonicalAddress, isBounceableTonAddress } from '../../../../src/server/domain/withdrawals/rules.ts';

const ACCOUNT = Address.parseRaw(`0:${'ab'.repeat(32)}`);
const MASTER = Address.parseRaw(`-1:${'ab'.repeat(32)}`);

describe('TON addresses in the address book', () => {
  it('keep the bounce flag as entered, url-safe', () => {
    const eq = ACCOUNT.toString({ bounceable: true });
    const uq = ACCOUNT.toString({ bounceable: false });
    const ef = MASTER.toString({ bounceable: true });
    expect(eq.startsWith('EQ') && uq.startsWith('UQ') && ef.startsWith('Ef')).toBe(true);
    expect(bookAddress('TON', eq)).toBe(eq);
    expect(bookAddress('TON', uq)).toBe(uq);
    expect(bookAddress('TON', ef)).toBe(ef);
    expect(bookAddress('TON', MASTER.toString({ bounceable: false }))).toMatch(/^Uf/);
    // The url-unsafe spelling of the same address is kept url-safe.
    expect(bookAddress('TON', ACCOUNT.toString({ bounceable: true, urlSafe: false }))).toBe(ACCOUNT.toString({ bounceable: true, urlSafe: true }));
    // Test-only addresses keep their flag too.
    expect(bookAddress('TON', ACCOUNT.toString({ bounceable: true, testOnly: true }))).toMatch(/^kQ/);
  });

  it('keep a raw address bounceable, TON’s default', () => {
    expect(bookAddress('TON', ACCOUNT.toRawString())).toBe(ACCOUNT.toString({ bounceable: true, urlSafe: true }));
    expect(isBounceableTonAddress(ACCOUNT.toRawString())).toBe(true);
    expect(isBounceableTonAddress(ACCOUNT.toString({ bounceable: true }))).toBe(true);
    expect(isBounceableTonAddress(ACCOUNT.toString({ bounceable: false }))).toBe(false);
  });

  it('still identify the same wallet however it is spelled, and leave other networks canonical', () => {
    expect(canonicalAddress('TON', ACCOUNT.toString({ bounceable: true }))).toBe(ACCOUNT.toString({ bounceable: false, urlSafe: true }));
    expect(bookAddress('ETHEREUM', '0x52908400098527886e0f7030069857d2e4169ee7')).toBe('0x52908400098527886E0F7030069857D2E4169EE7');
  });
});
