import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chainsConfig, chainsSchema } from '../../../../../../src/server/config-chains.ts';

/** The UTXO adapter's settings: Bitcoin Core's testnet4 and signet as CHAIN_ENV values, MAX_FEE_RATE and batching. */
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

  it('batches withdrawals only when UTXO_BATCH_SECONDS is above 0, at most UTXO_BATCH_MAX_OUTPUTS each', () => {
    const defaults = chainsConfig(parse({}).data ?? {}, 'devnet').utxo;
    expect(defaults).toMatchObject({ batchSeconds: 0, batchMaxOutputs: 50 });
    expect(chainsConfig(parse({ UTXO_BATCH_SECONDS: '30', UTXO_BATCH_MAX_OUTPUTS: '8' }).data ?? {}, 'devnet').utxo).toMatchObject({ batchSeconds: 30, batchMaxOutputs: 8 });
    for (const bad of ['-1', '1.5', '3601', 'soon']) expect(parse({ UTXO_BATCH_SECONDS: bad }).success, bad).toBe(false);
    for (const bad of ['1', '0', '501']) expect(parse({ UTXO_BATCH_MAX_OUTPUTS: bad }).success, bad).toBe(false);
  });
});
