import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CHAIN_ADAPTERS, openChains, type ChainAdapterEntry, type ChainsOptions } from '../../../../src/server/adapters/chains/open.ts';
import { ChainOffError, type ChainAdapter } from '../../../../src/server/adapters/chains/port.ts';
import { chainsConfig } from '../../../../src/server/config-chains.ts';
import { chainAddressing } from '../../../../src/server/domain/addresses.ts';
import type { Network } from '../../../../src/lib/currencies.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

const CHAIN_ADDRESSING = chainAddressing('mainnet');

const options: ChainsOptions = { ...chainsConfig({ DEVNET_BLOCK_MS: 100 }, 'devnet'), publicUrl: 'http://wallet.test', seed: new Uint8Array(64), addresses: CHAIN_ADDRESSING };
const pool = {} as pg.Pool;

/** An adapter that only answers which adapter it is (in its explorer link) and what a fee costs. */
function fakeAdapter(name: string): ChainAdapter {
  const refuse = () => Promise.reject(new Error(`${name} does not do this`));
  return {
    networks: [],
    requiredConfirmations: () => 1,
    scan: refuse,
    status: refuse,
    explorerUrl: () => `https://${name}/{tx}`,
    hotWalletAddress: refuse,
    signWithdrawal: refuse,
    broadcast: refuse,
    estimateFee: async (query) => ({ network: query.network, currency: name, amount: unitsOf(1n) }),
    replaceByFee: refuse,
    holdings: refuse,
    collection: { sweeps: () => name === 'evm', sweep: refuse, topUpGas: refuse },
  };
}

const entry = (name: string, networks: readonly Network[]): ChainAdapterEntry => ({ name, networks: () => networks, open: () => fakeAdapter(name) });

describe('the chain adapters registry', () => {
  it('gives each network to the first adapter that offers it, and leaves the rest off', async () => {
    const chains = openChains(pool, options, [entry('evm', ['ETHEREUM']), entry('fallback', ['ETHEREUM', 'BITCOIN'])]);
    expect(chains.adapters).toMatchObject({ ETHEREUM: 'evm', BITCOIN: 'fallback', TON: 'off' });
    expect(chains.port.networks).toEqual(['BITCOIN', 'ETHEREUM']);
    expect(chains.port.explorerUrl('ETHEREUM')).toBe('https://evm/{tx}');
    expect((await chains.port.estimateFee({ network: 'BITCOIN', currency: 'BTC', toAddress: 'x', amount: unitsOf(1n) })).currency).toBe('fallback');
    expect(chains.port.collection.sweeps('ETHEREUM')).toBe(true);
    expect(chains.port.collection.sweeps('TON')).toBe(false);
    await expect(chains.port.estimateFee({ network: 'TON', currency: 'TON', toAddress: 'x', amount: unitsOf(1n) })).rejects.toThrow(ChainOffError);
    expect(chains.devnet).toBeUndefined();
  });

  it('opens nothing for an adapter that offers no network', () => {
    const chains = openChains(pool, options, [{ name: 'unused', networks: () => [], open: () => { throw new Error('opened'); } }]);
    expect(chains.port.networks).toEqual([]);
  });

  it('puts the networks whose node URL is set on the UTXO adapter, before the devnet, and the rest on the devnet', () => {
    const withNode: ChainsOptions = { ...chainsConfig({ DEVNET_BLOCK_MS: 100, LITECOIN_RPC_URL: 'http://u:p@127.0.0.1:1', CHAIN_ENV: 'regtest' }, 'devnet'), publicUrl: 'http://wallet.test', seed: new Uint8Array(64), addresses: chainAddressing('regtest') };
    const chains = openChains(pool, withNode, CHAIN_ADAPTERS.filter((e) => e.name === 'utxo-node'));
    expect(chains.adapters).toMatchObject({ LITECOIN: 'utxo-node', BITCOIN: 'off', DOGECOIN: 'off' });
    // The node replaces unmined withdrawals after RBF_AFTER_BLOCKS; an adapter without the method never does.
    expect(chains.port.replaceAfterBlocks?.('LITECOIN')).toBe(6);
    expect(chains.port.replaceAfterBlocks?.('BITCOIN')).toBeUndefined();
    expect(CHAIN_ADAPTERS.map((e) => e.name).indexOf('utxo-node')).toBeLessThan(CHAIN_ADAPTERS.map((e) => e.name).indexOf('devnet'));
  });
});
