import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.ts';

describe('buy and sell configuration', () => {
  it('has defaults: sell off, the sandbox card provider, USD and EUR, 1.5% fee, 300 s rates', () => {
    const config = loadConfig({});
    expect(config.sellEnabled).toBe(false);
    expect(config.buy).toMatchObject({ provider: 'sandbox', webhookSecret: undefined, merchantName: 'Wallet', fiatCurrencies: ['USD', 'EUR'], feeBps: 150, limits: {}, rateTtlS: 300, orderTtlS: 1800, maxSlippageBps: 100 });
    expect(loadConfig({ BUY_MAX_SLIPPAGE_BPS: '25' }).buy.maxSlippageBps).toBe(25);
  });
  it('reads SELL_ENABLED, the fiat list and per-method limits', () => {
    const config = loadConfig({ SELL_ENABLED: 'on', BUY_FIAT_CURRENCIES: 'EUR,USD,EUR', BUY_LIMITS: '{"CARD":{"min":"20","max":"100"},"CARD/EUR":{"min":"5","max":"50.5"}}' });
    expect(config.sellEnabled).toBe(true);
    expect(config.buy.fiatCurrencies).toEqual(['EUR', 'USD']);
    expect(config.buy.limits).toEqual({ CARD: { min: '20', max: '100' }, 'CARD/EUR': { min: '5', max: '50.5' } });
  });
  it('refuses bad values with one line naming the variable, and never prints the secret', () => {
    expect(() => loadConfig({ BUY_FIAT_CURRENCIES: 'USD,RUB' })).toThrow(/BUY_FIAT_CURRENCIES/);
    expect(() => loadConfig({ BUY_LIMITS: '{"CARD":{"min":"100","max":"10"}}' })).toThrow(/BUY_LIMITS/);
    expect(() => loadConfig({ BUY_LIMITS: 'nope' })).toThrow(/BUY_LIMITS.*JSON/);
    expect(() => loadConfig({ SELL_ENABLED: 'yes' })).toThrow(/SELL_ENABLED/);
    for (const bad of ['-1', '0.5', '1001']) expect(() => loadConfig({ BUY_MAX_SLIPPAGE_BPS: bad }), bad).toThrow(/^BUY_MAX_SLIPPAGE_BPS is invalid/);
    expect(() => loadConfig({ CARD_WEBHOOK_SECRET: 'short' })).toThrow(/CARD_WEBHOOK_SECRET is invalid \(got "\*\*\*"\)/);
  });
});
