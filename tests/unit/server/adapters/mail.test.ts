import { describe, expect, it } from 'vitest';
import { renderMail } from '../../../../src/server/adapters/mail/templates.ts';

describe('mail templates', () => {
  const link = 'https://wallet.example/auth/signup/confirm/abc_DEF-123';

  it('render the link in text and HTML, in English and Russian', () => {
    const en = renderMail('confirm_email', 'ENG', link);
    const ru = renderMail('confirm_email', 'RUS', link);
    expect(en.subject).toBe('Confirm your e-mail address');
    expect(ru.subject).toMatch(/Подтвердите/);
    for (const mail of [en, ru]) {
      expect(mail.text).toContain(link);
      expect(mail.html).toContain(`href="${link}"`);
    }
    expect(ru.html).toContain('lang="ru"');
  });

  it('say how long a reset link lives', () => {
    expect(renderMail('reset_password', 'ENG', link).text).toMatch(/1 hour/);
    expect(renderMail('reset_password', 'RUS', link).text).toMatch(/1 часа/);
  });

  it('escape what goes into HTML', () => {
    expect(renderMail('reset_password', 'ENG', 'https://x.example/?a=1&b="2"').html).toContain('a=1&amp;b=&quot;2&quot;');
  });

  it('tell the owner in their language that sign-in is paused, pointing at a password reset', () => {
    const en = renderMail('account_locked', 'ENG', 'https://wallet.example/auth/forgot');
    expect(en.subject).toBe('Someone is trying to sign in to your wallet');
    expect(en.text).toContain('https://wallet.example/auth/forgot');
    expect(en.html).toContain('Set a new password');
    const ru = renderMail('account_locked', 'RUS', 'https://wallet.example/auth/forgot');
    expect(ru.subject).toBe('Кто-то пытается войти в ваш кошелёк');
    expect(ru.text).toContain('вход на время приостановлен');
  });
});

