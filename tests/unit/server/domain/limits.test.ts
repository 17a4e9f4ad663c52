import { describe, expect, it } from 'vitest';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { capMails, emailKey, limitOf, TooManyMailsError } from '../../../../src/server/domain/limits.ts';
import type { MailRequest } from '../../../../src/server/adapters/mail/mailer.ts';

describe('mail cap', () => {
  it('lets the cap of mails to one address through, refuses the rest before the mailer, and counts each address apart', async () => {
    const sent: string[] = [];
    const mailer = capMails({ send: async (mail) => void sent.push(mail.to), close: () => {} }, limitOf(new RateLimiterMemory({ points: 2, duration: 3600 })));
    const mail = (to: string): MailRequest => ({ to, kind: 'reset_password', language: 'ENG', link: 'https://wallet.example/auth/forgot/x' });
    await mailer.send(mail('owner@example.com'));
    await mailer.send(mail('Owner@Example.com '));
    const refused = await mailer.send(mail('owner@example.com')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyMailsError);
    expect(refused).toMatchObject({ status: 429, exceptionCode: 'TOO_MANY_MAILS' });
    expect((refused as TooManyMailsError).retryAfterSeconds).toBeGreaterThan(3500);
    await mailer.send(mail('other@example.com'));
    expect(sent).toEqual(['owner@example.com', 'Owner@Example.com ', 'other@example.com']);
  });

  it('keys e-mail addresses by a hash that fits the store and names no address', () => {
    const key = emailKey(`${'a'.repeat(240)}@example.com`);
    expect(key).toHaveLength(43);
    expect(key).not.toContain('example');
    expect(emailKey(' A@Example.com')).toBe(emailKey('a@example.com'));
  });
});
