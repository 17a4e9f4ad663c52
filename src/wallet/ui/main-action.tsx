import { useEffect, useRef } from 'react';
import { platform } from '../../platform/platform.ts';

/**
 * A screen's main action (continue to review, confirm, buy, sell): a full-width primary button in the browser.
 * Inside the Telegram mini app the platform's native main button takes its place (SPEC §2, §6): this renders
 * nothing and drives that button, so every flow that uses this component gets it for free.
 * `pinned` (the steps of a flow, where no bottom navigation shows) fixes the button at the foot of the screen, in reach
 * of the thumb and visible however long the screen, as the messenger's own main button is (issue 33 item 4).
 */
export function MainAction({ label, onClick, disabled = false, busy = false, pinned = false }: { label: string; onClick: () => void; disabled?: boolean; busy?: boolean; pinned?: boolean }) {
  const native = platform().mainButton;
  // The latest handler, so a re-render with a new closure never re-subscribes the native button.
  const handler = useRef(onClick);
  handler.current = onClick;
  useEffect(() => {
    if (!native) return undefined;
    return native.show({ label, disabled, busy }, () => handler.current());
  }, [native, label, disabled, busy]);
  if (native) return null;
  const button = (
    <button type="button" className="btn-primary w-full" onClick={onClick} disabled={disabled || busy} aria-busy={busy} data-testid="main-action">
      {label}
    </button>
  );
  return pinned ? (
    <div className="main-action-bar" data-testid="main-action-bar">
      {button}
    </div>
  ) : (
    button
  );
}
