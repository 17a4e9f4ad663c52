import type { CodeMailKind, MailKind, MailLanguage } from './port.ts';

export type RenderedMail = { subject: string; text: string; html: string };

type Texts = { subject: string; greeting: string; body: string; action: string; expiry: string; ignore: string };

const TEXTS: Record<Exclude<MailKind, CodeMailKind | 'feedback'>, Record<MailLanguage, Texts>> = {
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
  signup_existing: {
    ENG: {
      subject: 'Someone tried to sign up with your e-mail address',
      greeting: 'Hello,',
      body: 'Someone tried to sign up for a wallet with this e-mail address, which already has one. If it was you, sign in with your password, or set a new one if you forgot it:',
      action: 'Set a new password',
      expiry: 'Nothing in your wallet was changed.',
      ignore: 'If it was not you, ignore this message: nobody can use your wallet without your password.',
    },
    RUS: {
      subject: 'Кто-то пытался зарегистрироваться с вашим адресом',
      greeting: 'Здравствуйте!',
      body: 'Кто-то пытался зарегистрировать кошелёк на этот адрес, но кошелёк на него уже есть. Если это были вы, войдите со своим паролем или задайте новый, если забыли его:',
      action: 'Задать новый пароль',
      expiry: 'В вашем кошельке ничего не изменилось.',
      ignore: 'Если это были не вы, проигнорируйте письмо: без вашего пароля никто не войдёт в кошелёк.',
    },
  },
  messenger_linked: {
    ENG: {
      subject: 'A Telegram account was linked to your wallet',
      greeting: 'Hello,',
      body: 'A Telegram account was just linked to your wallet: it can now sign in to it. If it was not you, change your password at once (this removes the link) and turn the passcode on:',
      action: 'Set a new password',
      expiry: 'You can see and remove the linked account in the wallet\'s settings.',
      ignore: 'If you linked it yourself, there is nothing to do.',
    },
    RUS: {
      subject: 'К вашему кошельку привязан аккаунт Telegram',
      greeting: 'Здравствуйте!',
      body: 'К вашему кошельку только что привязан аккаунт Telegram: теперь через него можно войти в кошелёк. Если это были не вы, сразу смените пароль (привязка будет удалена) и включите пин-код:',
      action: 'Задать новый пароль',
      expiry: 'Привязанный аккаунт можно посмотреть и отвязать в настройках кошелька.',
      ignore: 'Если вы привязали его сами, ничего делать не нужно.',
    },
  },
  account_locked: {
    ENG: {
      subject: 'Someone is trying to sign in to your wallet',
      greeting: 'Hello,',
      body: 'There were many sign-in attempts with wrong passwords for the wallet registered to this e-mail address, from several places. To protect it, signing in is paused for a while. If you still know your password, there is nothing to do. If you think someone may know it, set a new one:',
      action: 'Set a new password',
      expiry: 'Setting a new password ends the pause at once and signs out everyone else.',
      ignore: 'If these attempts were yours, wait a little and try again.',
    },
    RUS: {
      subject: 'Кто-то пытается войти в ваш кошелёк',
      greeting: 'Здравствуйте!',
      body: 'Было много попыток войти с неверным паролем в кошелёк, зарегистрированный на этот адрес, из разных мест. Чтобы защитить его, вход на время приостановлен. Если вы по-прежнему знаете свой пароль, ничего делать не нужно. Если пароль мог стать кому-то известен, задайте новый:',
      action: 'Задать новый пароль',
      expiry: 'Новый пароль сразу снимает паузу и завершает все чужие сеансы.',
      ignore: 'Если это были ваши попытки, подождите немного и попробуйте снова.',
    },
  },
};

type CodeTexts = { subject: string; greeting: string; body: string; expiry: string; ignore: string };

const CODE_TEXTS: Record<CodeMailKind, Record<MailLanguage, CodeTexts>> = {
  email_change_old: {
    ENG: {
      subject: 'Confirm the change of your e-mail address',
      greeting: 'Hello,',
      body: 'You asked to change the e-mail address of your wallet. To confirm that this address is yours, enter this code in the wallet:',
      expiry: 'The code works once and expires in 15 minutes.',
      ignore: 'If it was not you, ignore this message and check your wallet\'s protection: your e-mail stays the same.',
    },
    RUS: {
      subject: 'Подтвердите смену адреса электронной почты',
      greeting: 'Здравствуйте!',
      body: 'Вы запросили смену адреса электронной почты кошелька. Чтобы подтвердить, что этот адрес ваш, введите в кошельке код:',
      expiry: 'Код действует один раз в течение 15 минут.',
      ignore: 'Если это были не вы, проигнорируйте письмо и проверьте защиту кошелька: адрес останется прежним.',
    },
  },
  email_change_new: {
    ENG: {
      subject: 'Confirm your new e-mail address',
      greeting: 'Hello,',
      body: 'This address was given as the new e-mail address of a wallet. To confirm it, enter this code in the wallet:',
      expiry: 'The code works once and expires in 15 minutes.',
      ignore: 'If it was not you, ignore this message.',
    },
    RUS: {
      subject: 'Подтвердите новый адрес электронной почты',
      greeting: 'Здравствуйте!',
      body: 'Этот адрес указан как новый адрес электронной почты кошелька. Чтобы подтвердить его, введите в кошельке код:',
      expiry: 'Код действует один раз в течение 15 минут.',
      ignore: 'Если это были не вы, просто проигнорируйте письмо.',
    },
  },
  pincode_reset: {
    ENG: {
      subject: 'Reset your wallet passcode',
      greeting: 'Hello,',
      body: 'Your wallet passcode was blocked after too many wrong attempts. To reset it, enter this code in the wallet:',
      expiry: 'The code works once and expires in 15 minutes. Resetting turns the passcode off; set a new one afterwards.',
      ignore: 'If it was not you, someone may be trying to guess your passcode: change your password.',
    },
    RUS: {
      subject: 'Сброс пин-кода кошелька',
      greeting: 'Здравствуйте!',
      body: 'Пин-код кошелька заблокирован после слишком многих неверных попыток. Чтобы сбросить его, введите в кошельке код:',
      expiry: 'Код действует один раз в течение 15 минут. Сброс отключает пин-код; затем задайте новый.',
      ignore: 'Если это были не вы, кто-то пытается подобрать ваш пин-код: смените пароль.',
    },
  },
};

export function isCodeMail(kind: MailKind): kind is CodeMailKind {
  return kind in CODE_TEXTS;
}

/** A mail carrying a short code to type into the wallet, in the user's language. */
function renderCodeMail(kind: CodeMailKind, language: MailLanguage, code: string): RenderedMail {
  const t = CODE_TEXTS[kind][language];
  const text = [t.greeting, '', t.body, '', code, '', t.expiry, t.ignore, ''].join('\n');
  const html = `<!doctype html>
<html lang="${language === 'RUS' ? 'ru' : 'en'}"><head><meta charset="utf-8"><title>${escapeHtml(t.subject)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#202025;max-width:540px;margin:0 auto;padding:24px">
<p>${escapeHtml(t.greeting)}</p>
<p>${escapeHtml(t.body)}</p>
<p style="font-size:32px;font-weight:700;letter-spacing:8px;font-family:ui-monospace,monospace">${escapeHtml(code)}</p>
<p style="font-size:13px;color:#666">${escapeHtml(t.expiry)}<br>${escapeHtml(t.ignore)}</p>
</body></html>
`;
  return { subject: t.subject, text, html };
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}

/** One mail in the user's language, as plain text and as HTML carrying the same link. */
export function renderMail(kind: MailKind, language: MailLanguage, link: string, body = ''): RenderedMail {
  if (isCodeMail(kind)) return renderCodeMail(kind, language, link);
  if (kind === 'feedback') return renderFeedbackMail(link, body);
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

/** A user's feedback for support (always in English: it is read by the team, answered in the user's language). */
function renderFeedbackMail(from: string, body: string): RenderedMail {
  const subject = `Wallet feedback from ${from}`;
  const text = [`Feedback from ${from}:`, '', body, ''].join('\n');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#202025;max-width:540px;margin:0 auto;padding:24px">
<p>Feedback from ${escapeHtml(from)}:</p>
<p style="white-space:pre-wrap">${escapeHtml(body)}</p>
</body></html>
`;
  return { subject, text, html };
}
