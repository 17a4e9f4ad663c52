import { describe, expect, it } from 'vitest';
import { bumped, sweepCaps, withMargin } from '../../../../src/server/adapters/chains/evm/fees.ts';
import { checkChainId } from '../../../../src/server/adapters/chains/evm/rpc.ts';

describe('the EVM adapter fee rules', () => {
  it('bumps a replacement at least 10 % on both caps, rounded up, and never below the market', () => {
    expect(bumped({ maxFeePerGas: 101n, maxPriorityFeePerGas: 11n }, { maxFeePerGas: 50n, maxPriorityFeePerGas: 1n })).toEqual({ maxFeePerGas: 112n, maxPriorityFeePerGas: 13n });
    expect(bumped({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, { maxFeePerGas: 500n, maxPriorityFeePerGas: 40n })).toEqual({ maxFeePerGas: 500n, maxPriorityFeePerGas: 40n });
    expect(bumped({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }, 300n).maxFeePerGas).toBe(300n);
  });

  it('caps a sweep at the next base fee and a quarter plus the tip, never above the market cap', () => {
    expect(sweepCaps({ maxFeePerGas: 2_100n, maxPriorityFeePerGas: 100n }, 1_000n)).toEqual({ maxFeePerGas: 1_350n, maxPriorityFeePerGas: 100n });
    expect(sweepCaps({ maxFeePerGas: 1_000n, maxPriorityFeePerGas: 100n }, 1_000n).maxFeePerGas).toBe(1_000n);
  });

  it('adds a fifth to gas above a plain transfer only', () => {
    expect(withMargin(21_000n)).toBe(21_000n);
    expect(withMargin(50_000n)).toBe(60_000n);
  });

  it('checks the node chain id against CHAIN_ENV', () => {
    expect(() => checkChainId(1, 'mainnet')).not.toThrow();
    expect(() => checkChainId(11155111, 'testnet')).not.toThrow();
    expect(() => checkChainId(31337, 'regtest')).not.toThrow();
    expect(() => checkChainId(1, 'regtest')).toThrow(/chain id 1 \(mainnet\) but CHAIN_ENV is regtest/);
    expect(() => checkChainId(31337, 'mainnet')).toThrow(/chain id 31337 \(a local or private chain\) but CHAIN_ENV is mainnet/);
    expect(() => checkChainId(11155111, 'mainnet')).toThrow(/set CHAIN_ENV=testnet/);
  });
});
