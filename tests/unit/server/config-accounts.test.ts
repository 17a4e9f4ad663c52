import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

describe('sign-in configuration', () => {
  it('defaults to the embedded provider on PUBLIC_URL', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://wallet.example' });
    expect(config.oidc).toEqual({
      issuer: 'https://wallet.example/oidc',
      embedded: true,
      clientId: 'wallet-web',
      audience: 'https://wallet.example/api',
      accessTokenTtl: 900,
      idTokenTtl: 3600,
      refreshTokenTtl: 2_592_000,
    });
    expect(config.smtpUrl).toBeUndefined();
    expect(config.mailFrom).toBe('Wallet <no-reply@wallet.example>');
    expect(config.trustProxy).toEqual({ hops: 0 });
  });

  it('trusts another issuer when OIDC_ISSUER names one', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://wallet.example', OIDC_ISSUER: 'https://sso.example/realms/wallet/', OIDC_CLIENT_ID: 'wallet' });
    expect(config.oidc).toMatchObject({ issuer: 'https://sso.example/realms/wallet', embedded: false, clientId: 'wallet' });
  });

  it('refuses short lifetimes, non-SMTP mail URLs and hides SMTP passwords', () => {
    expect(() => loadConfig({ OIDC_ACCESS_TOKEN_TTL: '1' })).toThrow(ConfigError);
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example' })).toThrow(/SMTP_URL is invalid/);
    expect(() => loadConfig({ SMTP_URL: 'ftp://user:secret@mail.example' })).toThrow(/\*\*\*/);
  });
});
