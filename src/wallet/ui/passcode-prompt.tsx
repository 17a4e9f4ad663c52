import { useStore } from '@nanostores/react';
import { useEffect, useState } from 'react';
import { $pincodeBlocked, createPasscodeEntry, PASSCODE_LENGTH } from '../../stores/passcode-entry.ts';
import { $t } from '../../stores/i18n.ts';
import { getPagePath } from '@nanostores/router';
import { $router } from '../../stores/router.ts';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '', '0', 'erase'] as const;

/**
 * The passcode keypad (SPEC §4, §9): four circles 216 px wide over a keypad of 3 keys a row. `onComplete` runs
 * 300 ms after the fourth digit; if it rejects, the circles empty and the error's text shows under them.
 * Digits and Backspace typed on a keyboard work too.
 */
export function PasscodePrompt({ title, onComplete }: { title: string; onComplete: (pin: string) => Promise<void> }) {
  const t = useStore($t);
  const [entry] = useState(() => createPasscodeEntry(onComplete));
  entry.setAction(onComplete);
  const state = useStore(entry.$state);
  const blocked = useStore($pincodeBlocked);
  const off = state.busy || state.waitSeconds > 0 || blocked;

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement) return;
      if (/^\d$/.test(event.key)) entry.press(event.key);
      else if (event.key === 'Backspace') entry.erase();
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      entry.dispose();
    };
  }, [entry]);

  return (
    <section className="flex flex-col items-center gap-6 pt-6" data-testid="passcode-prompt" aria-busy={state.busy} data-locked={state.waitSeconds > 0 || blocked} data-blocked={blocked}>
      <h2 className="text-xl font-700 m-0 text-center">{title}</h2>
      <div className="flex justify-between" style={{ width: 216 }} data-testid="passcode-circles" data-filled={state.digits.length} aria-label={t('passcode_entered', { count: state.digits.length })} role="img">
        {Array.from({ length: PASSCODE_LENGTH }, (_, index) => (
          <span
            key={index}
            className={`block w-4 h-4 rounded-full border-2 border-solid border-primary ${index < state.digits.length ? 'bg-primary' : 'bg-transparent'}`}
            data-filled={index < state.digits.length}
          />
        ))}
      </div>
      <p className="m-0 min-h-6 text-danger text-sm text-center" role="alert" data-testid="passcode-error">
        {blocked ? t('passcode_blocked_prompt') : (state.error ?? '')}
      </p>
      {blocked && (
        <a href={getPagePath($router, 'passcode')} className="btn-primary no-underline -mt-2" data-testid="passcode-reset-link">
          {t('passcode_reset_action')}
        </a>
      )}
      <div className="grid grid-cols-3 gap-3 w-full" style={{ maxWidth: 288 }}>
        {KEYS.map((key, index) =>
          key === '' ? (
            <span key={index} />
          ) : key === 'erase' ? (
            <button key={index} type="button" className="btn-ghost h-16 rounded-2xl text-xl" onClick={() => entry.erase()} disabled={off || state.digits === ''} aria-label={t('passcode_erase')} data-testid="passcode-erase">
              ⌫
            </button>
          ) : (
            <button key={index} type="button" className="btn-ghost h-16 rounded-2xl text-2xl" onClick={() => entry.press(key)} disabled={off} data-testid={`passcode-key-${key}`}>
              {key}
            </button>
          ),
        )}
      </div>
    </section>
  );
}
