import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';
import { TELEGRAM_PUBLIC_KEYS } from '../../../src/lib/telegram.ts';

const TOKEN = '7123456789:AAE-wallet-test-bot-token-0123456789';

describe('Telegram configuration', () => {
  it('runs the development mode without a token outside production, with the Bot API stand-in', () => {
    const { telegram } = loadConfig({ PUBLIC_URL: 'http://localhost:4321' });
    expect(telegram).toMatchObject({ botToken: undefined, devMode: true, enabled: true, apiRoot: 'http://localhost:4321/sandbox/telegram', initDataMaxAgeS: 3600, publicKey: TELEGRAM_PUBLIC_KEYS.production });
    expect(telegram.miniAppUrl).toBe('http://localhost:4321/tg');
  });

  it('turns the development mode off with a real token, and never runs it in production', () => {
    const real = loadConfig({ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_BOT_USERNAME: '@wallet_bot', TELEGRAM_INIT_DATA_MAX_AGE: '600', TELEGRAM_PUBLIC_KEY: 'test' }).telegram;
    expect(real).toMatchObject({ devMode: false, enabled: true, botUsername: 'wallet_bot', apiRoot: 'https://api.telegram.org', initDataMaxAgeS: 600, publicKey: TELEGRAM_PUBLIC_KEYS.test });
    const production = loadConfig({ APP_ENV: 'production', WALLET_SEED: 'x' }).telegram;
    expect(production).toMatchObject({ devMode: false, enabled: false });
    expect(loadConfig({ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_BOT_USERNAME: 'wallet_bot', TELEGRAM_API_ROOT: 'sandbox', PUBLIC_URL: 'http://h:1' }).telegram.apiRoot).toBe('http://h:1/sandbox/telegram');
  });

  it('refuses a token without a username, a malformed token or key, and hides the token in the message', () => {
    expect(() => loadConfig({ TELEGRAM_BOT_TOKEN: TOKEN })).toThrow(/TELEGRAM_BOT_USERNAME is required/);
    expect(() => loadConfig({ TELEGRAM_BOT_TOKEN: 'not-a-token', TELEGRAM_BOT_USERNAME: 'wallet_bot' })).toThrow(ConfigError);
    expect(() => loadConfig({ TELEGRAM_BOT_TOKEN: 'not-a-token' })).not.toThrow(/not-a-token/);
    expect(() => loadConfig({ TELEGRAM_PUBLIC_KEY: 'abc' })).toThrow(/TELEGRAM_PUBLIC_KEY/);
    expect(() => loadConfig({ TELEGRAM_INIT_DATA_MAX_AGE: '0' })).toThrow(/TELEGRAM_INIT_DATA_MAX_AGE/);
  });
});
