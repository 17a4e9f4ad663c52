import { describe, expect, it } from 'vitest';
import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import { p2pkh, p2wpkh } from '@scure/btc-signer';
import * as bitcoinjs from 'bitcoinjs-lib';
import { chainAddressing, deriveAddress, derivationPath, isValidAddress } from '../../../../src/server/domain/addresses.ts';
import { CHAIN_ENVS, NETWORKS, type Network } from '../../../../src/lib/currencies.ts';

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
  it("matches BIP84's vectors: m/84'/0'/0'/0/0 and /1, and the change chain's m/84'/0'/0'/1/0 beside the same account", async () => {
    expect(derivationPath('BITCOIN', 0, 'mainnet')).toBe("m/84'/0'/0'/0/0");
    expect(await deriveAddress(seed, 'BITCOIN', 0, 'mainnet')).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(await deriveAddress(seed, 'BITCOIN', 1, 'mainnet')).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
    // The internal chain (/1/i, change) is the same account's sibling: BIP84's published change vector.
    const change = HDKey.fromMasterSeed(seed).derive(derivationPath('BITCOIN', 0, 'mainnet').replace(/\/0\/0$/, '/1/0'));
    expect(p2wpkh(change.publicKey ?? new Uint8Array()).address).toBe('bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el');
  });

  it("matches BIP44's vector (m/44'/0'/0'/0/0) on the path Dogecoin shares but for its coin type", () => {
    const key = HDKey.fromMasterSeed(seed).derive(derivationPath('DOGECOIN', 0, 'mainnet').replace("/3'/", "/0'/"));
    expect(p2pkh(key.publicKey ?? new Uint8Array()).address).toBe('1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA');
  });

  it("matches the known Ethereum vector (m/44'/60'/0'/0/0, EIP-55)", async () => {
    expect(await deriveAddress(seed, 'ETHEREUM', 0, 'mainnet')).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });

  it("matches the known Tron vector (m/44'/195'/0'/0/0, base58check)", async () => {
    expect(await deriveAddress(seed, 'TRON', 0, 'mainnet')).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
  });

  it('matches the known Litecoin (BIP84, coin 2) and Dogecoin (BIP44, coin 3) vectors', async () => {
    expect(await deriveAddress(seed, 'LITECOIN', 0, 'mainnet')).toBe('ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh');
    expect(await deriveAddress(seed, 'DOGECOIN', 0, 'mainnet')).toBe('DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC');
  });

  it("uses SLIP-44's test coin type 1 for the UTXO networks off mainnet, and one path everywhere for the others", () => {
    for (const env of ['testnet', 'regtest'] as const) {
      expect(derivationPath('BITCOIN', 4, env)).toBe("m/84'/1'/0'/0/4");
      expect(derivationPath('LITECOIN', 4, env)).toBe("m/84'/1'/0'/0/4");
      expect(derivationPath('DOGECOIN', 4, env)).toBe("m/44'/1'/0'/0/4");
      expect(derivationPath('ETHEREUM', 4, env)).toBe(derivationPath('ETHEREUM', 4, 'mainnet'));
      expect(derivationPath('TRON', 4, env)).toBe(derivationPath('TRON', 4, 'mainnet'));
      expect(derivationPath('TON', 4, env)).toBe(derivationPath('TON', 4, 'mainnet'));
    }
  });

  it("matches the published testnet vectors (m/84'/1'/0'/0/0 and m/44'/1'/0'/0/0) and their other networks' encodings", async () => {
    // Published for BIP84's mnemonic on Bitcoin testnet (Electrum, Sparrow, Ian Coleman's tool agree).
    const segwit = 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl';
    const legacy = 'mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV';
    expect(await deriveAddress(seed, 'BITCOIN', 0, 'testnet')).toBe(segwit);
    // The same witness program and key hash, encoded by bitcoinjs-lib for each chain's prefixes (the nodes' chainparams).
    const program = bitcoinjs.address.fromBech32(segwit).data;
    const hash = bitcoinjs.address.fromBase58Check(legacy).hash;
    expect(await deriveAddress(seed, 'BITCOIN', 0, 'regtest')).toBe(bitcoinjs.address.toBech32(program, 0, 'bcrt'));
    expect(await deriveAddress(seed, 'LITECOIN', 0, 'testnet')).toBe(bitcoinjs.address.toBech32(program, 0, 'tltc'));
    expect(await deriveAddress(seed, 'LITECOIN', 0, 'regtest')).toBe(bitcoinjs.address.toBech32(program, 0, 'rltc'));
    expect(await deriveAddress(seed, 'DOGECOIN', 0, 'testnet')).toBe(bitcoinjs.address.toBase58Check(hash, 0x71));
    expect(await deriveAddress(seed, 'DOGECOIN', 0, 'regtest')).toBe(legacy);
    expect(await deriveAddress(seed, 'DOGECOIN', 0, 'testnet')).toMatch(/^n/);
  });

  it("hands adapters the UTXO networks' address parameters of its CHAIN_ENV, the ones its addresses are made with", async () => {
    for (const env of CHAIN_ENVS) {
      const addressing = chainAddressing(env);
      for (const network of ['BITCOIN', 'LITECOIN'] as const) {
        const key = HDKey.fromMasterSeed(seed).derive(addressing.path(network, 5));
        expect(p2wpkh(key.publicKey ?? new Uint8Array(), addressing.utxoParams(network)).address).toBe(await addressing.derive(seed, network, 5));
      }
      const doge = HDKey.fromMasterSeed(seed).derive(addressing.path('DOGECOIN', 5));
      expect(p2pkh(doge.publicKey ?? new Uint8Array(), addressing.utxoParams('DOGECOIN')).address).toBe(await addressing.derive(seed, 'DOGECOIN', 5));
    }
    expect(chainAddressing('regtest').utxoParams('LITECOIN')).toMatchObject({ bech32: 'rltc', pubKeyHash: 0x6f, scriptHash: 0x3a });
  });

  it('gives TON the test-only flag off mainnet, and Ethereum and TRON the same address everywhere', async () => {
    const { Address } = await import('@ton/core');
    const main = await deriveAddress(seed, 'TON', 0, 'mainnet');
    const test = await deriveAddress(seed, 'TON', 0, 'testnet');
    expect(test).toMatch(/^0Q/);
    expect(Address.parseFriendly(test).isTestOnly).toBe(true);
    expect(Address.parse(test).equals(Address.parse(main))).toBe(true);
    for (const network of ['ETHEREUM', 'TRON'] as const) expect(await deriveAddress(seed, network, 3, 'regtest')).toBe(await deriveAddress(seed, network, 3, 'mainnet'));
  });

  it('gives TON a standard wallet address (non-bounceable, basechain), distinct per index', async () => {
    const first = await deriveAddress(seed, 'TON', 0, 'mainnet');
    expect(first).toMatch(/^UQ[A-Za-z0-9_-]{46}$/);
    expect(await deriveAddress(seed, 'TON', 0, 'mainnet')).toBe(first);
    expect(await deriveAddress(seed, 'TON', 1, 'mainnet')).not.toBe(first);
  });

  it('refuses an index outside the non-hardened range', async () => {
    await expect(deriveAddress(seed, 'BITCOIN', -1, 'mainnet')).rejects.toThrow(RangeError);
    await expect(deriveAddress(seed, 'BITCOIN', 2 ** 31, 'mainnet')).rejects.toThrow(RangeError);
  });
});

describe('the server address check', () => {
  it('accepts the addresses it derives, on their own network only', async () => {
    for (const network of NETWORKS) {
      for (const index of [0, 1, 7]) {
        const address = await deriveAddress(seed, network, index, 'mainnet');
        expect(isValidAddress(network, address, 'mainnet'), `${network} ${address}`).toBe(true);
        for (const other of NETWORKS.filter((n) => n !== network)) expect(isValidAddress(other, address, 'mainnet'), `${other} ${address}`).toBe(false);
      }
    }
  });

  it('accepts well-known valid forms: legacy and script Bitcoin, lower-case Ethereum, raw and bounceable TON', async () => {
    expect(isValidAddress('BITCOIN', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'mainnet')).toBe(true);
    expect(isValidAddress('BITCOIN', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'mainnet')).toBe(true);
    expect(isValidAddress('BITCOIN', 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr', 'mainnet')).toBe(true);
    expect(isValidAddress('ETHEREUM', '0x9858effd232b4033e47d90003d41ec34ecaeda94', 'mainnet')).toBe(true);
    expect(isValidAddress('TON', `0:${'ab'.repeat(32)}`, 'mainnet')).toBe(true);
    const { Address } = await import('@ton/core');
    const ton = Address.parse(await deriveAddress(seed, 'TON', 0, 'mainnet'));
    expect(isValidAddress('TON', ton.toString({ bounceable: true }), 'mainnet')).toBe(true);
    expect(isValidAddress('TON', ton.toString({ testOnly: true }), 'mainnet')).toBe(false);
  });

  it('takes bech32 in upper case as in lower case, Litecoin as Bitcoin, and never mixed case', async () => {
    for (const network of ['BITCOIN', 'LITECOIN'] as const) {
      const address = await deriveAddress(seed, network, 0, 'mainnet');
      expect(isValidAddress(network, address.toUpperCase(), 'mainnet')).toBe(true);
      expect(isValidAddress(network, address.slice(0, 10) + address.slice(10).toUpperCase(), 'mainnet')).toBe(false);
    }
  });

  it('refuses every one-character change, on every network', async () => {
    for (const network of NETWORKS) {
      const address = await deriveAddress(seed, network, 0, 'mainnet');
      const start = network === 'ETHEREUM' ? 2 : network === 'BITCOIN' || network === 'LITECOIN' ? address.indexOf('1') + 1 : 1;
      for (let position = start; position < address.length; position++) {
        const changed = changeOne(network, address, position);
        expect(isValidAddress(network, changed, 'mainnet'), `${network}: ${changed}`).toBe(false);
      }
    }
  });

  it('refuses a mixed-case Ethereum address whose EIP-55 checksum is wrong', () => {
    expect(isValidAddress('ETHEREUM', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 'mainnet')).toBe(true);
    expect(isValidAddress('ETHEREUM', '0x9858eFFD232B4033E47d90003D41EC34EcaEda94', 'mainnet')).toBe(false);
  });

  it("takes each chain environment's addresses exactly under its own CHAIN_ENV", async () => {
    for (const env of CHAIN_ENVS) {
      const addressing = chainAddressing(env);
      for (const network of NETWORKS) {
        const address = await addressing.derive(seed, network, 2);
        expect(addressing.isValid(network, address), `${env} ${network} ${address}`).toBe(true);
        for (const other of CHAIN_ENVS.filter((e) => e !== env)) {
          // Ethereum and TRON have one address format on every chain, TON one for all test chains; Dogecoin regtest also takes 0x71.
          const shared = network === 'ETHEREUM' || network === 'TRON' || (network === 'TON' && other !== 'mainnet' && env !== 'mainnet');
          const expected = shared || (network === 'DOGECOIN' && env === 'testnet' && other === 'regtest');
          expect(chainAddressing(other).isValid(network, address), `${address} under ${other}`).toBe(expected);
        }
      }
    }
    expect(isValidAddress('BITCOIN', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'testnet')).toBe(true);
    expect(isValidAddress('BITCOIN', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'mainnet')).toBe(false);
    expect(isValidAddress('BITCOIN', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', 'regtest')).toBe(true);
    expect(isValidAddress('BITCOIN', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'regtest')).toBe(false);
    // Dogecoin Core's development branch gives regtest testnet's 0x71: accepted there too.
    expect(isValidAddress('DOGECOIN', await deriveAddress(seed, 'DOGECOIN', 0, 'testnet'), 'regtest')).toBe(true);
  });

  it('takes upper-case bech32 off mainnet too, never mixed case', async () => {
    for (const env of ['testnet', 'regtest'] as const) {
      for (const network of ['BITCOIN', 'LITECOIN'] as const) {
        const address = await deriveAddress(seed, network, 0, env);
        expect(isValidAddress(network, address.toUpperCase(), env), address.toUpperCase()).toBe(true);
        expect(isValidAddress(network, address.slice(0, 12) + address.slice(12).toUpperCase(), env)).toBe(false);
      }
    }
  });

  it('refuses shapes that are not addresses at all', () => {
    for (const network of NETWORKS) for (const bad of ['', ' ', 'hello', '0x', 'bc1']) expect(isValidAddress(network, bad, 'mainnet')).toBe(false);
  });
});
