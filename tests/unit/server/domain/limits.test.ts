import { describe, expect, it } from 'vitest';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { capMails, emailKeyOf, limitOf, TooManyMailsError } from '../../../../src/server/domain/limits.ts';
import { statusOf } from '../../../../src/server/http/errors.ts';
import { secretsKeyFrom } from '../../../../src/server/adapters/keys/secrets-key.ts';

const emailKey = emailKeyOf(secretsKeyFrom(new Uint8Array(32).fill(7), 'env'));
import type { MailRequest } from '../../../../src/server/adapters/mail/port.ts';

describe('mail cap', () => {
  it('lets the cap of mails to one address through, refuses the rest before the mailer, and counts each address apart', async () => {
    const sent: string[] = [];
    const mailer = capMails({ send: async (mail) => void sent.push(mail.to), close: () => {} }, limitOf(new RateLimiterMemory({ points: 2, duration: 3600 })), emailKey);
    const mail = (to: string): MailRequest => ({ to, kind: 'reset_password', language: 'ENG', link: 'https://wallet.example/auth/forgot/x' });
    await mailer.send(mail('owner@example.com'));
    await mailer.send(mail('Owner@Example.com '));
    const refused = await mailer.send(mail('owner@example.com')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyMailsError);
    // The domain names the refusal; http's one map answers it with 429.
    expect(refused).toMatchObject({ code: 'TOO_MANY_MAILS' });
    expect(statusOf((refused as TooManyMailsError).code)).toBe(429);
    expect((refused as TooManyMailsError).retryAfterSeconds).toBeGreaterThan(3500);
    await mailer.send(mail('other@example.com'));
    expect(sent).toEqual(['owner@example.com', 'Owner@Example.com ', 'other@example.com']);
  });

  it('always lets the security notices through: a filled share must not hide a new link or a guessing campaign', async () => {
    const sent: string[] = [];
    const mailer = capMails({ send: async (mail) => void sent.push(mail.kind), close: () => {} }, limitOf(new RateLimiterMemory({ points: 1, duration: 3600 })), emailKey);
    const to = 'owner@example.com';
    await mailer.send({ to, kind: 'reset_password', language: 'ENG', link: 'https://wallet.example/auth/forgot/x' });
    await expect(mailer.send({ to, kind: 'reset_password', language: 'ENG', link: 'https://wallet.example/auth/forgot/y' })).rejects.toBeInstanceOf(TooManyMailsError);
    await mailer.send({ to, kind: 'messenger_linked', language: 'ENG', link: 'https://wallet.example/auth/forgot' });
    await mailer.send({ to, kind: 'account_locked', language: 'ENG', link: 'https://wallet.example/auth/forgot' });
    expect(sent).toEqual(['reset_password', 'messenger_linked', 'account_locked']);
  });

  it('keys e-mail addresses by a hash that fits the store and names no address', () => {
    const key = emailKey(`${'a'.repeat(240)}@example.com`);
    expect(key.length).toBeLessThanOrEqual(255);
    expect(key).not.toContain('example');
    // Keyed: another SECRETS_KEY gives another key, so a guessed address cannot be checked against the table.
    expect(emailKeyOf(secretsKeyFrom(new Uint8Array(32).fill(8), 'env'))('a@example.com')).not.toBe(emailKey('a@example.com'));
    expect(emailKey(' A@Example.com')).toBe(emailKey('a@example.com'));
  });
});
