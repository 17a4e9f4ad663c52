import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

const PRODUCTION = { APP_ENV: 'production', WALLET_SEED: 'x' };

describe('production runs on no stand-in', () => {
  it('turns chains, buying and selling off in production when nothing real is configured', () => {
    const config = loadConfig(PRODUCTION);
    expect(config.chains.mode).toBe('off');
    expect(config.buy.provider).toBe('off');
    expect(config.payout.provider).toBe('off');
    expect(config.telegram).toMatchObject({ devMode: false, enabled: false });
  });

  it('keeps the stand-ins as the default outside production', () => {
    const config = loadConfig({});
    expect(config.chains.mode).toBe('devnet');
    expect(config.buy.provider).toBe('sandbox');
    expect(config.payout.provider).toBe('sandbox');
  });

  it('refuses a stand-in asked for in production, naming the variable', () => {
    expect(() => loadConfig({ ...PRODUCTION, CHAINS: 'devnet' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...PRODUCTION, CHAINS: 'devnet' })).toThrow(/^CHAINS=devnet .*cannot run in production/);
    expect(() => loadConfig({ ...PRODUCTION, CARD_PROVIDER: 'sandbox' })).toThrow(/^CARD_PROVIDER=sandbox .*cannot run in production/);
    expect(() => loadConfig({ ...PRODUCTION, PAYOUT_PROVIDER: 'sandbox' })).toThrow(/^PAYOUT_PROVIDER=sandbox .*cannot run in production/);
    const bot = { TELEGRAM_BOT_TOKEN: '123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ', TELEGRAM_BOT_USERNAME: 'wallet_bot' };
    expect(() => loadConfig({ ...PRODUCTION, ...bot, TELEGRAM_API_ROOT: 'sandbox' })).toThrow(/^TELEGRAM_API_ROOT=sandbox .*cannot run in production/);
    expect(() => loadConfig({ ...PRODUCTION, ...bot, PUBLIC_URL: 'https://w.example', TELEGRAM_API_ROOT: 'https://w.example/sandbox/telegram/' })).toThrow(/TELEGRAM_API_ROOT/);
    expect(loadConfig({ ...PRODUCTION, ...bot }).telegram.apiRoot).toBe('https://api.telegram.org');
  });

  it('has CARD_PROVIDER=off, PAYOUT_PROVIDER=off and CHAINS=off in every environment', () => {
    for (const env of [{}, { APP_ENV: 'test' }, PRODUCTION]) {
      const config = loadConfig({ ...env, CARD_PROVIDER: 'off', PAYOUT_PROVIDER: 'off', CHAINS: 'off' });
      expect(config.buy.provider).toBe('off');
      expect(config.payout.provider).toBe('off');
      expect(config.chains.mode).toBe('off');
    }
    expect(() => loadConfig({ CARD_PROVIDER: 'stripe' })).toThrow(/CARD_PROVIDER is invalid/);
  });
});
