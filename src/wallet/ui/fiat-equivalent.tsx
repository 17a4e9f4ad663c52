import { useStore } from '@nanostores/react';
import { $fiatEquivalent } from '../../stores/rates.ts';

/** "≈ $12.34" under a crypto amount the user types or reviews (issue 33 item 3); nothing without an amount or a rate. */
/** `under`: set right-aligned under a summary line (a review's DetailLine). */
export function FiatEquivalent({ amount, currency, testId, under }: { amount: string; currency: string; testId: string; under?: boolean }) {
  const text = useStore($fiatEquivalent)(amount, currency);
  return text === undefined ? null : (
    <span className={`text-xs text-muted${under ? ' self-end -mt-2' : ''}`} data-testid={testId}>
      {text}
    </span>
  );
}
