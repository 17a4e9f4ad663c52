import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

describe('custody configuration', () => {
  it('has development defaults: devnet with 2 s blocks, workers polling every 500 ms, a walking rate table', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ appEnv: 'development', production: false, walletSeed: undefined, workerPollMs: 500, ratesWalkMs: 10_000 });
    expect(config.chains).toMatchObject({ mode: 'devnet', env: 'mainnet', blockMs: 2000, confirmations: {}, minDeposit: {} });
    expect(config.chains.utxo.nodes).toEqual({ BITCOIN: undefined, LITECOIN: undefined, DOGECOIN: undefined });
    expect(config.chains.evm.tokens).toEqual({ USDT_ETH: '0xdAC17F958D2ee523a2206206994597C13D831ec7', USDC_ETH: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' });
    expect(config.chains.tron.tokens).toEqual({ USDT_TRX: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' });
  });

  it('is production with APP_ENV=production, or NODE_ENV=production when APP_ENV is unset', () => {
    expect(loadConfig({ APP_ENV: 'production' }).production).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).production).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', APP_ENV: 'test' }).production).toBe(false);
  });

  it('reads per-network confirmations', () => {
    expect(loadConfig({ CONFIRMATIONS: 'BITCOIN:1,ETHEREUM:12' }).chains.confirmations).toEqual({ BITCOIN: 1, ETHEREUM: 12 });
    expect(() => loadConfig({ CONFIRMATIONS: 'SOLANA:3' })).toThrow(/CONFIRMATIONS is invalid/);
    expect(() => loadConfig({ DEVNET_BLOCK_MS: '5' })).toThrow(ConfigError);
  });

  it('refuses the old DEVNET_CONFIRMATIONS by name, so a deployment does not silently lose its confirmations', () => {
    expect(() => loadConfig({ DEVNET_CONFIRMATIONS: 'BITCOIN:1' })).toThrow(/renamed CONFIRMATIONS/);
  });

  it('reads the chain environment, minimum deposits in atomic units, and node URLs without echoing their passwords', () => {
    const config = loadConfig({ CHAIN_ENV: 'regtest', MIN_DEPOSIT: 'LTC:0.0001,ETH:0.000000000000000001', LITECOIN_RPC_URL: 'http://u:p@127.0.0.1:19443', FEE_RATE_FALLBACK: 'LITECOIN:12' });
    expect(config.chains.env).toBe('regtest');
    expect(config.chains.minDeposit).toEqual({ LTC: 10_000n, ETH: 1n });
    expect(config.chains.utxo.nodes.LITECOIN).toBe('http://u:p@127.0.0.1:19443');
    expect(config.chains.utxo.feeRateFallback).toEqual({ LITECOIN: 12n });
    expect(() => loadConfig({ CHAIN_ENV: 'liquid' })).toThrow(/CHAIN_ENV is invalid/);
    expect(() => loadConfig({ MIN_DEPOSIT: 'XYZ:1' })).toThrow(/MIN_DEPOSIT names XYZ/);
    expect(() => loadConfig({ MIN_DEPOSIT: 'BTC:0.000000001' })).toThrow(/MIN_DEPOSIT for BTC/);
    expect(() => loadConfig({ LITECOIN_RPC_URL: 'ftp://u:secret@host' })).toThrow(/LITECOIN_RPC_URL is invalid \(got "ftp:\/\/u:\*\*\*@host/);
  });
});
