import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.ts';

describe('the operating settings', () => {
  it('serve no metrics, drain for 0 ms and set no hot-wallet floor by default', () => {
    expect(loadConfig({}).operating).toEqual({ metrics: undefined, shutdownDrainMs: 0, hotWalletMinimum: {}, tracing: undefined });
  });

  it('read METRICS_PORT (loopback unless METRICS_HOST says), SHUTDOWN_DRAIN_MS and HOT_WALLET_MINIMUM', () => {
    const operating = loadConfig({ METRICS_PORT: '9464', SHUTDOWN_DRAIN_MS: '5000', HOT_WALLET_MINIMUM: '{"BTC":"0.5","USDT_TRX":"1000"}' }).operating;
    expect(operating).toEqual({ metrics: { port: 9464, host: '127.0.0.1' }, shutdownDrainMs: 5000, hotWalletMinimum: { BTC: '0.5', USDT_TRX: '1000' }, tracing: undefined });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).operating.metrics).toEqual({ port: 9464, host: '10.0.0.5' });
  });

  it('refuse metrics on the public port and malformed values, naming the variable', () => {
    expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(/^METRICS_PORT is 8080, the public PORT/);
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow(/^METRICS_PORT is invalid/);
    expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: '-1' })).toThrow(/^SHUTDOWN_DRAIN_MS is invalid/);
    expect(() => loadConfig({ HOT_WALLET_MINIMUM: 'BTC=1' })).toThrow(/^HOT_WALLET_MINIMUM is invalid .*must be JSON like/);
    expect(() => loadConfig({ HOT_WALLET_MINIMUM: '{"BTC":"-1"}' })).toThrow(/^HOT_WALLET_MINIMUM is invalid/);
  });

  it('trace only with OTEL_EXPORTER_OTLP_ENDPOINT, to its /v1/traces, with the service name and headers', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SERVICE_NAME: 'x' }).operating.tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).operating.tracing).toEqual({ tracesUrl: 'http://collector:4318/v1/traces', serviceName: 'custodial-wallet', headers: {} });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example/base/', OTEL_SERVICE_NAME: 'wallet-eu', OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20k3y, x-team=ops' }).operating.tracing,
    ).toEqual({ tracesUrl: 'https://otlp.example/base/v1/traces', serviceName: 'wallet-eu', headers: { authorization: 'Bearer k3y', 'x-team': 'ops' } });
  });

  it('refuse a tracing endpoint that is not an http(s) URL, and malformed headers without echoing them', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/^OTEL_EXPORTER_OTLP_ENDPOINT is invalid/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toThrow(/^OTEL_EXPORTER_OTLP_ENDPOINT is invalid/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'secret-key-only' })).toThrow(/^OTEL_EXPORTER_OTLP_HEADERS is invalid: it must be/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'secret-key-only' })).not.toThrow(/secret-key-only/);
  });
});
