import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chainsConfig, chainsSchema } from '../../../../../../src/server/config-chains.ts';

/** The UTXO adapter's settings: Bitcoin Core's testnet4 and signet as CHAIN_ENV values, and MAX_FEE_RATE. */
const parse = (env: Record<string, string>) => z.object(chainsSchema).safeParse(env);

describe('CHAIN_ENV testnet4 and signet, MAX_FEE_RATE', () => {
  it('takes testnet4 and signet with testnet address formats and the chain name the Bitcoin node must report', () => {
    for (const chain of ['testnet4', 'signet'] as const) {
      const parsed = parse({ CHAIN_ENV: chain });
      expect(parsed.success).toBe(true);
      const config = chainsConfig(parsed.data ?? {}, 'devnet');
      expect(config.env).toBe('testnet');
      expect(config.utxo.testChain).toBe(chain);
    }
    expect(chainsConfig({ CHAIN_ENV: 'testnet' }, 'devnet').utxo.testChain).toBe('test');
    expect(chainsConfig({ CHAIN_ENV: 'regtest' }, 'devnet')).toMatchObject({ env: 'regtest', utxo: { testChain: 'test' } });
    expect(parse({ CHAIN_ENV: 'testnet3' }).success).toBe(false);
  });

  it('reads MAX_FEE_RATE per UTXO network in sat/vB and refuses anything else', () => {
    expect(chainsConfig({ MAX_FEE_RATE: 'LITECOIN:200,BITCOIN:500' }, 'devnet').utxo.maxFeeRate).toEqual({ LITECOIN: 200n, BITCOIN: 500n });
    expect(chainsConfig({}, 'devnet').utxo.maxFeeRate).toEqual({});
    for (const bad of ['ETHEREUM:5', 'LITECOIN:0', 'LITECOIN:1.5', 'LITECOIN', 'LITECOIN:200,']) expect(parse({ MAX_FEE_RATE: bad }).success, bad).toBe(false);
  });
});
