/**
 * The few refusals whose `message` the gateway answers in the user's language (SPEC §8: the passcode prompt shows
 * the gateway's own text). The domain says what happened in its details (the user's language, seconds to wait);
 * the words are built here. Every other error answers with its plain English message.
 */
import type { DomainError } from '../domain/errors.ts';

type Language = 'ENG' | 'RUS';

function duration(seconds: number, language: Language): string {
  const whole = Math.max(1, Math.ceil(seconds));
  if (whole < 60) return language === 'RUS' ? `${whole} с` : `${whole} s`;
  const minutes = Math.ceil(whole / 60);
  return language === 'RUS' ? `${minutes} мин` : `${minutes} min`;
}

/** "1250.50" as "$1,250.50" (English) or "1 250,50 $" (Russian). */
function dollars(amount: string, language: Language): string {
  const [whole = '0', cents = '00'] = amount.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, language === 'RUS' ? '\u00a0' : ',');
  return language === 'RUS' ? `${grouped},${cents}\u00a0$` : `$${grouped}.${cents}`;
}

const TRANSLATED: Readonly<Record<string, (language: Language, details: DomainError['details']) => string>> = {
  B2C_USM0031: (language) => (language === 'RUS' ? 'Неверный пин-код' : 'Incorrect pin code'),
  B2C_USM0030: (language, details) => {
    const wait = duration(Number(details['waitSeconds'] ?? 0), language);
    return language === 'RUS' ? `Слишком много неверных пин-кодов. Повторите через ${wait}` : `Too many wrong pin codes. Try again in ${wait}`;
  },
  // What is left of the daily limit (domain/withdrawals/limits.ts): the send screen shows the gateway's text.
  WITHDRAWAL_DAILY_LIMIT: (language, details) => {
    const limit = dollars(String(details['limitUsd'] ?? '0'), language);
    const left = dollars(String(details['leftUsd'] ?? '0'), language);
    return language === 'RUS'
      ? `Превышен дневной лимит на вывод (${limit} за 24 часа). Сейчас можно отправить ещё не больше ${left}.`
      : `This is over your daily withdrawal limit of ${limit} in 24 hours. You can send up to ${left} more right now.`;
  },
  B2C_USM0032: (language) => (language === 'RUS' ? 'Пин-код заблокирован. Сбросьте его через электронную почту' : 'The pin code is blocked. Reset it through your e-mail'),
};

/** The `message` an error is answered with: in the language its details name, where the code has words of its own. */
export function userMessage(error: DomainError): string {
  const words = TRANSLATED[error.code];
  if (!words) return error.message;
  return words(error.details['language'] === 'RUS' ? 'RUS' : 'ENG', error.details);
}
