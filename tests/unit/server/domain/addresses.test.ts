import { describe, expect, it } from 'vitest';
import { mnemonicToSeedSync } from '@scure/bip39';
import { deriveAddress, derivationPath, isValidAddress } from '../../../../src/server/domain/addresses.ts';
import { NETWORKS, type Network } from '../../../../src/lib/currencies.ts';

// BIP84's own test mnemonic; the expected addresses are the published vectors of BIP84 (Bitcoin) and of the
// wallets that use coin types 60 (Ethereum), 195 (Tron), 2 (Litecoin) and 3 (Dogecoin) with it.
const seed = mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');

const ALPHABETS: Record<Network, string> = {
  BITCOIN: 'qpzry9x8gf2tvdw0s3jn54khce6mua7l',
  LITECOIN: 'qpzry9x8gf2tvdw0s3jn54khce6mua7l',
  DOGECOIN: '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz',
  TRON: '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz',
  ETHEREUM: '0123456789abcdefABCDEF',
  TON: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
};

/** The address with one character replaced by another of its alphabet (same case for hex, so only the value changes). */
function changeOne(network: Network, address: string, position: number): string {
  const current = address[position] ?? '';
  let alphabet = ALPHABETS[network];
  if (network === 'ETHEREUM') alphabet = /[0-9]/.test(current) ? '0123456789' : current === current.toUpperCase() ? 'ABCDEF' : 'abcdef';
  const replacement = [...alphabet].find((c) => c !== current) ?? '';
  return address.slice(0, position) + replacement + address.slice(position + 1);
}

describe('deposit address derivation', () => {
  it("matches BIP84's vectors: m/84'/0'/0'/0/0 and /1", async () => {
    expect(derivationPath('BITCOIN', 0)).toBe("m/84'/0'/0'/0/0");
    expect(await deriveAddress(seed, 'BITCOIN', 0)).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(await deriveAddress(seed, 'BITCOIN', 1)).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
  });

  it("matches the known Ethereum vector (m/44'/60'/0'/0/0, EIP-55)", async () => {
    expect(await deriveAddress(seed, 'ETHEREUM', 0)).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });

  it("matches the known Tron vector (m/44'/195'/0'/0/0, base58check)", async () => {
    expect(await deriveAddress(seed, 'TRON', 0)).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
  });

  it('matches the known Litecoin (BIP84, coin 2) and Dogecoin (BIP44, coin 3) vectors', async () => {
    expect(await deriveAddress(seed, 'LITECOIN', 0)).toBe('ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh');
    expect(await deriveAddress(seed, 'DOGECOIN', 0)).toBe('DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC');
  });

  it('gives TON a standard wallet address (non-bounceable, basechain), distinct per index', async () => {
    const first = await deriveAddress(seed, 'TON', 0);
    expect(first).toMatch(/^UQ[A-Za-z0-9_-]{46}$/);
    expect(await deriveAddress(seed, 'TON', 0)).toBe(first);
    expect(await deriveAddress(seed, 'TON', 1)).not.toBe(first);
  });

  it('refuses an index outside the non-hardened range', async () => {
    await expect(deriveAddress(seed, 'BITCOIN', -1)).rejects.toThrow(RangeError);
    await expect(deriveAddress(seed, 'BITCOIN', 2 ** 31)).rejects.toThrow(RangeError);
  });
});

describe('the server address check', () => {
  it('accepts the addresses it derives, on their own network only', async () => {
    for (const network of NETWORKS) {
      for (const index of [0, 1, 7]) {
        const address = await deriveAddress(seed, network, index);
        expect(isValidAddress(network, address), `${network} ${address}`).toBe(true);
        for (const other of NETWORKS.filter((n) => n !== network)) expect(isValidAddress(other, address), `${other} ${address}`).toBe(false);
      }
    }
  });

  it('accepts well-known valid forms: legacy and script Bitcoin, lower-case Ethereum, raw and bounceable TON', async () => {
    expect(isValidAddress('BITCOIN', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2')).toBe(true);
    expect(isValidAddress('BITCOIN', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy')).toBe(true);
    expect(isValidAddress('BITCOIN', 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr')).toBe(true);
    expect(isValidAddress('ETHEREUM', '0x9858effd232b4033e47d90003d41ec34ecaeda94')).toBe(true);
    expect(isValidAddress('TON', `0:${'ab'.repeat(32)}`)).toBe(true);
    const { Address } = await import('@ton/core');
    const ton = Address.parse(await deriveAddress(seed, 'TON', 0));
    expect(isValidAddress('TON', ton.toString({ bounceable: true }))).toBe(true);
    expect(isValidAddress('TON', ton.toString({ testOnly: true }))).toBe(false);
  });

  it('takes bech32 in upper case as in lower case, Litecoin as Bitcoin, and never mixed case', async () => {
    for (const network of ['BITCOIN', 'LITECOIN'] as const) {
      const address = await deriveAddress(seed, network, 0);
      expect(isValidAddress(network, address.toUpperCase())).toBe(true);
      expect(isValidAddress(network, address.slice(0, 10) + address.slice(10).toUpperCase())).toBe(false);
    }
  });

  it('refuses every one-character change, on every network', async () => {
    for (const network of NETWORKS) {
      const address = await deriveAddress(seed, network, 0);
      const start = network === 'ETHEREUM' ? 2 : network === 'BITCOIN' || network === 'LITECOIN' ? address.indexOf('1') + 1 : 1;
      for (let position = start; position < address.length; position++) {
        const changed = changeOne(network, address, position);
        expect(isValidAddress(network, changed), `${network}: ${changed}`).toBe(false);
      }
    }
  });

  it('refuses a mixed-case Ethereum address whose EIP-55 checksum is wrong', () => {
    expect(isValidAddress('ETHEREUM', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94')).toBe(true);
    expect(isValidAddress('ETHEREUM', '0x9858eFFD232B4033E47d90003D41EC34EcaEda94')).toBe(false);
  });

  it('refuses shapes that are not addresses at all', () => {
    for (const network of NETWORKS) for (const bad of ['', ' ', 'hello', '0x', 'bc1']) expect(isValidAddress(network, bad)).toBe(false);
  });
});
