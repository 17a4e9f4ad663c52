import type { ReactNode } from 'react';
import { Glyph, type GlyphName } from './glyph.tsx';

export type OutcomeTone = 'success' | 'pending' | 'failed';

const GLYPH: Record<OutcomeTone, GlyphName> = { success: 'check', pending: 'clock', failed: 'failed' };

/**
 * The head of a result screen (issue 19 item 29): a tinted icon that says how it went, the amount in large type,
 * the title, what happened, and what happens next. Every result screen uses it, so they read alike.
 */
export function OutcomeHero({ tone, amount, title, text, next, testId, titleTestId, level = 1 }: { tone: OutcomeTone; amount?: ReactNode; title: string; text?: ReactNode; next?: ReactNode; testId?: string; titleTestId?: string; level?: 1 | 2 }) {
  const Heading = level === 2 ? 'h2' : 'h1';
  return (
    <section className="outcome flex flex-col items-center gap-3 pt-8 text-center" data-tone={tone} data-testid={testId}>
      <span className={`outcome-icon outcome-icon-${tone}`}>
        <Glyph name={GLYPH[tone]} size={40} />
      </span>
      {amount !== undefined && (
        <span className="text-3xl font-800 leading-tight break-words max-w-full" data-testid="outcome-amount">
          {amount}
        </span>
      )}
      <Heading className="m-0 text-xl font-700" data-testid={titleTestId}>
        {title}
      </Heading>
      {text !== undefined && <p className="m-0 text-muted max-w-[34ch]">{text}</p>}
      {next !== undefined && (
        <p className="card m-0 mt-2 w-full flex items-start gap-3 text-left text-sm" data-testid="outcome-next">
          <span className="text-muted shrink-0 mt-0.5 inline-flex">
            <Glyph name="clock" size={18} />
          </span>
          <span>{next}</span>
        </p>
      )}
    </section>
  );
}
