import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

describe('custody configuration', () => {
  it('has development defaults: devnet with 2 s blocks, workers polling every 500 ms, a walking rate table', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ appEnv: 'development', production: false, walletSeed: undefined, workerPollMs: 500, ratesWalkMs: 10_000 });
    expect(config.chains).toEqual({ mode: 'devnet', blockMs: 2000, confirmations: {} });
  });

  it('is production with APP_ENV=production, or NODE_ENV=production when APP_ENV is unset', () => {
    expect(loadConfig({ APP_ENV: 'production' }).production).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).production).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', APP_ENV: 'test' }).production).toBe(false);
  });

  it('reads per-network confirmations', () => {
    expect(loadConfig({ DEVNET_CONFIRMATIONS: 'BITCOIN:1,ETHEREUM:12' }).chains.confirmations).toEqual({ BITCOIN: 1, ETHEREUM: 12 });
    expect(() => loadConfig({ DEVNET_CONFIRMATIONS: 'SOLANA:3' })).toThrow(/DEVNET_CONFIRMATIONS is invalid/);
    expect(() => loadConfig({ DEVNET_BLOCK_MS: '5' })).toThrow(ConfigError);
  });
});
