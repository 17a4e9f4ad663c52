import type { ReactNode } from 'react';
import { Glyph } from './glyph.tsx';
import { platform } from '../../platform/platform.ts';

/**
 * A sub-screen's top bar: back link and title. Inside the mini app Telegram's native back button is the one back
 * control (issue 19 item 27): the page's arrow is left out there.
 */
export function ScreenHeader({ title, back, backLabel }: { title: string; back: string; backLabel: string }) {
  const native = platform().backButton !== undefined;
  return (
    <header className={`flex items-center gap-2 min-h-10 ${native ? '' : '-mx-2'}`}>
      {!native && (
        <a href={back} className="inline-flex items-center justify-center w-10 h-10 rounded-full text-fg" aria-label={backLabel}>
          <Glyph name="back" />
        </a>
      )}
      <h1 className="text-xl font-700 m-0 break-words leading-tight">{title}</h1>
    </header>
  );
}

/** A titled part of a screen, with an optional action on the right. */
export function SectionHeader({ title, action }: { title: string; action?: ReactNode }) {
  return (
    <div className="flex items-center justify-between mt-2">
      <h2 className="text-base font-700 m-0">{title}</h2>
      {action}
    </div>
  );
}

/** A round action under a balance: Receive, Send, Swap, Buy. */
export function RoundAction({ label, glyph, href, onClick }: { label: string; glyph: 'receive' | 'send' | 'swap' | 'card'; href?: string; onClick?: () => void }) {
  const inner = (
    <>
      <span className="round-action-icon">
        <Glyph name={glyph} size={22} />
      </span>
      <span className="text-xs font-600 text-center leading-tight">{label}</span>
    </>
  );
  return href ? (
    <a href={href} className="round-action">
      {inner}
    </a>
  ) : (
    <button type="button" className="round-action" onClick={onClick}>
      {inner}
    </button>
  );
}
