import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.ts';

describe('the operating settings', () => {
  it('serve no metrics, drain for 0 ms and set no hot-wallet floor by default', () => {
    expect(loadConfig({}).operating).toEqual({ metrics: undefined, shutdownDrainMs: 0, hotWalletMinimum: {} });
  });

  it('read METRICS_PORT (loopback unless METRICS_HOST says), SHUTDOWN_DRAIN_MS and HOT_WALLET_MINIMUM', () => {
    const operating = loadConfig({ METRICS_PORT: '9464', SHUTDOWN_DRAIN_MS: '5000', HOT_WALLET_MINIMUM: '{"BTC":"0.5","USDT_TRX":"1000"}' }).operating;
    expect(operating).toEqual({ metrics: { port: 9464, host: '127.0.0.1' }, shutdownDrainMs: 5000, hotWalletMinimum: { BTC: '0.5', USDT_TRX: '1000' } });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).operating.metrics).toEqual({ port: 9464, host: '10.0.0.5' });
  });

  it('refuse metrics on the public port and malformed values, naming the variable', () => {
    expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(/^METRICS_PORT is 8080, the public PORT/);
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow(/^METRICS_PORT is invalid/);
    expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: '-1' })).toThrow(/^SHUTDOWN_DRAIN_MS is invalid/);
    expect(() => loadConfig({ HOT_WALLET_MINIMUM: 'BTC=1' })).toThrow(/^HOT_WALLET_MINIMUM is invalid .*must be JSON like/);
    expect(() => loadConfig({ HOT_WALLET_MINIMUM: '{"BTC":"-1"}' })).toThrow(/^HOT_WALLET_MINIMUM is invalid/);
  });
});
