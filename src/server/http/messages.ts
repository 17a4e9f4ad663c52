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

const TRANSLATED: Readonly<Record<string, (language: Language, details: DomainError['details']) => string>> = {
  B2C_USM0031: (language) => (language === 'RUS' ? 'Неверный пин-код' : 'Incorrect pin code'),
  B2C_USM0030: (language, details) => {
    const wait = duration(Number(details['waitSeconds'] ?? 0), language);
    return language === 'RUS' ? `Слишком много неверных пин-кодов. Повторите через ${wait}` : `Too many wrong pin codes. Try again in ${wait}`;
  },
  B2C_USM0032: (language) => (language === 'RUS' ? 'Пин-код заблокирован. Сбросьте его через электронную почту' : 'The pin code is blocked. Reset it through your e-mail'),
};

/** The `message` an error is answered with: in the language its details name, where the code has words of its own. */
export function userMessage(error: DomainError): string {
  const words = TRANSLATED[error.code];
  if (!words) return error.message;
  return words(error.details['language'] === 'RUS' ? 'RUS' : 'ENG', error.details);
}
