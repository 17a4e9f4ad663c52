import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

const PRODUCTION = { APP_ENV: 'production', WALLET_SEED: 'x' };
const KEYS = { MOONPAY_API_KEY: 'pk_live_abc123', MOONPAY_SECRET_KEY: 'sk_live_def456', MOONPAY_WEBHOOK_KEY: 'wk_live_ghi789' };

describe('MoonPay as the card provider (issue 32)', () => {
  it('is a real provider: chosen in production too, with its keys, MoonPay\'s own addresses unless pointed elsewhere', () => {
    const buy = loadConfig({ ...PRODUCTION, CARD_PROVIDER: 'moonpay', ...KEYS }).buy;
    expect(buy.provider).toBe('moonpay');
    expect(buy.moonpay).toEqual({ apiKey: 'pk_live_abc123', secretKey: 'sk_live_def456', webhookKey: 'wk_live_ghi789', apiUrl: undefined, widgetUrl: undefined, timeoutMs: 8000 });
    expect(buy.paymentMethods).toEqual(['credit_debit_card']);
    const pointed = loadConfig({ CARD_PROVIDER: 'moonpay', ...KEYS, MOONPAY_API_URL: 'http://127.0.0.1:9', MOONPAY_WIDGET_URL: 'http://127.0.0.1:9/widget', MOONPAY_PAYMENT_METHODS: 'credit_debit_card,apple_pay', MOONPAY_TIMEOUT_MS: '1500' }).buy;
    expect(pointed.moonpay).toMatchObject({ apiUrl: 'http://127.0.0.1:9', widgetUrl: 'http://127.0.0.1:9/widget', timeoutMs: 1500 });
    expect(pointed.paymentMethods).toEqual(['credit_debit_card', 'apple_pay']);
  });

  it('without its keys is a clear ConfigError naming what is missing, in any environment', () => {
    expect(() => loadConfig({ ...PRODUCTION, CARD_PROVIDER: 'moonpay' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...PRODUCTION, CARD_PROVIDER: 'moonpay' })).toThrow(/^CARD_PROVIDER=moonpay needs MOONPAY_API_KEY, MOONPAY_SECRET_KEY, MOONPAY_WEBHOOK_KEY/);
    expect(() => loadConfig({ CARD_PROVIDER: 'moonpay', MOONPAY_API_KEY: KEYS.MOONPAY_API_KEY, MOONPAY_SECRET_KEY: KEYS.MOONPAY_SECRET_KEY })).toThrow(/needs MOONPAY_WEBHOOK_KEY:/);
    expect(() => loadConfig({ CARD_PROVIDER: 'moonpay', ...KEYS, MOONPAY_SECRET_KEY: 'sk_test_x1' })).toThrow(/both be live keys or both test keys/);
  });

  it('refuses keys of the wrong kind and never prints a secret', () => {
    expect(() => loadConfig({ CARD_PROVIDER: 'moonpay', ...KEYS, MOONPAY_API_KEY: 'sk_live_oops' })).toThrow(/^MOONPAY_API_KEY is invalid .*publishable key/);
    expect(() => loadConfig({ CARD_PROVIDER: 'moonpay', ...KEYS, MOONPAY_SECRET_KEY: 'pk_live_notsecret' })).toThrow(/^MOONPAY_SECRET_KEY is invalid \(got "\*\*\*"\)/);
    expect(() => loadConfig({ CARD_PROVIDER: 'moonpay', ...KEYS, MOONPAY_WEBHOOK_KEY: 'short' })).toThrow(/^MOONPAY_WEBHOOK_KEY is invalid \(got "\*\*\*"\)/);
    expect(() => loadConfig({ MOONPAY_PAYMENT_METHODS: 'Card!' })).toThrow(/^MOONPAY_PAYMENT_METHODS is invalid/);
  });

  it('leaves the sandbox the development default and off in production', () => {
    expect(loadConfig({}).buy).toMatchObject({ provider: 'sandbox', moonpay: undefined });
    expect(loadConfig(PRODUCTION).buy).toMatchObject({ provider: 'off', moonpay: undefined });
  });
});
