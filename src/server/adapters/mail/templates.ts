export type MailLanguage = 'ENG' | 'RUS';
export type MailKind = 'confirm_email' | 'reset_password';
export type RenderedMail = { subject: string; text: string; html: string };

type Texts = { subject: string; greeting: string; body: string; action: string; expiry: string; ignore: string };

const TEXTS: Record<MailKind, Record<MailLanguage, Texts>> = {
  confirm_email: {
    ENG: {
      subject: 'Confirm your e-mail address',
      greeting: 'Hello,',
      body: 'You signed up for a wallet with this e-mail address. Confirm it to start using your wallet:',
      action: 'Confirm e-mail',
      expiry: 'The link works once and expires in 24 hours.',
      ignore: 'If you did not sign up, ignore this message.',
    },
    RUS: {
      subject: 'Подтвердите адрес электронной почты',
      greeting: 'Здравствуйте!',
      body: 'Вы зарегистрировали кошелёк на этот адрес. Подтвердите его, чтобы начать пользоваться кошельком:',
      action: 'Подтвердить адрес',
      expiry: 'Ссылка действует один раз в течение 24 часов.',
      ignore: 'Если вы не регистрировались, просто проигнорируйте это письмо.',
    },
  },
  reset_password: {
    ENG: {
      subject: 'Reset your password',
      greeting: 'Hello,',
      body: 'Someone asked to reset the password of the wallet registered to this e-mail address. To set a new password, open:',
      action: 'Set a new password',
      expiry: 'The link works once and expires in 1 hour. Setting a new password signs you out everywhere.',
      ignore: 'If it was not you, ignore this message: your password stays the same.',
    },
    RUS: {
      subject: 'Сброс пароля',
      greeting: 'Здравствуйте!',
      body: 'Кто-то запросил сброс пароля кошелька, зарегистрированного на этот адрес. Чтобы задать новый пароль, откройте:',
      action: 'Задать новый пароль',
      expiry: 'Ссылка действует один раз в течение 1 часа. После смены пароля все сеансы будут завершены.',
      ignore: 'Если это были не вы, проигнорируйте письмо: пароль останется прежним.',
    },
  },
};

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}

/** One mail in the user's language, as plain text and as HTML carrying the same link. */
export function renderMail(kind: MailKind, language: MailLanguage, link: string): RenderedMail {
  const t = TEXTS[kind][language];
  const text = [t.greeting, '', t.body, link, '', t.expiry, t.ignore, ''].join('\n');
  const safeLink = escapeHtml(link);
  const html = `<!doctype html>
<html lang="${language === 'RUS' ? 'ru' : 'en'}"><head><meta charset="utf-8"><title>${escapeHtml(t.subject)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#202025;max-width:540px;margin:0 auto;padding:24px">
<p>${escapeHtml(t.greeting)}</p>
<p>${escapeHtml(t.body)}</p>
<p><a href="${safeLink}" style="display:inline-block;padding:12px 20px;background:#202025;color:#fff;border-radius:8px;text-decoration:none">${escapeHtml(t.action)}</a></p>
<p style="font-size:13px;word-break:break-all"><a href="${safeLink}">${safeLink}</a></p>
<p style="font-size:13px;color:#666">${escapeHtml(t.expiry)}<br>${escapeHtml(t.ignore)}</p>
</body></html>
`;
  return { subject: t.subject, text, html };
}
