import { useStore } from '@nanostores/react';
import { $fiatEquivalent } from '../../stores/rates.ts';

/** "≈ $12.34" under a crypto amount the user types or reviews (issue 33 item 3); nothing without an amount or a rate. */
export function FiatEquivalent({ amount, currency, testId }: { amount: string; currency: string; testId: string }) {
  const text = useStore($fiatEquivalent)(amount, currency);
  return text === undefined ? null : (
    <span className="text-xs text-muted" data-testid={testId}>
      {text}
    </span>
  );
}
