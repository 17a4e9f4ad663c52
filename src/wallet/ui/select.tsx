import type { ReactNode } from 'react';
import { Glyph } from './glyph.tsx';

/**
 * A styled select (issue 19 item 20): the native control (keyboard, screen readers, the phone's own picker) drawn
 * like the wallet's fields, with its chevron, in both themes.
 */
export function Select({ value, onChange, label, children, testId, invalid }: { value: string; onChange: (value: string) => void; label: string; children: ReactNode; testId?: string; invalid?: boolean }) {
  return (
    <span className="relative block">
      <select className={`field select ${invalid ? 'border-danger' : ''}`} value={value} onChange={(event) => onChange(event.target.value)} aria-label={label} aria-invalid={invalid} data-testid={testId}>
        {children}
      </select>
      <span className="absolute right-4 top-1/2 -translate-y-1/2 pointer-events-none text-muted rotate-90 inline-flex">
        <Glyph name="chevron" size={18} />
      </span>
    </span>
  );
}
