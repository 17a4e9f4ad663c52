import { useStore } from '@nanostores/react';
import type { ReactNode } from 'react';
import { typedAmountFor } from '../../lib/typed-amount.ts';
import { $locale } from '../../stores/settings.ts';
import type { CoinMeta } from '../../lib/currencies.ts';
import { baseTickerOf, networkTagOf } from '../../lib/format.ts';
import { CoinLogo } from './coin-logo.tsx';
import { FiatEquivalent } from './fiat-equivalent.tsx';
import { Glyph } from './glyph.tsx';

/** An order form's amount: a label, the currency chip (a link or a button) and the typed amount; red when invalid. */
export function AmountBox(props: { label: string; chip: ReactNode; value: string; onChange: (text: string) => void; invalid?: boolean; note?: string; currency?: string; testId: string }) {
  // Kept with a point, shown with the language's decimal mark like every label (SPEC §5).
  const locale = useStore($locale);
  return (
    <div className={`card flex flex-col gap-2 border border-solid ${props.invalid ? 'border-danger' : 'border-transparent focus-within:border-primary'}`} data-testid={props.testId}>
      <span className="text-sm text-muted">{props.label}</span>
      <div className="flex items-center gap-3">
        {props.chip}
        <input
          className="flex-1 min-w-0 bg-transparent border-none outline-none focus-visible:outline-none text-right text-2xl font-700 text-fg p-0"
          inputMode="decimal"
          autoComplete="off"
          placeholder="0"
          value={typedAmountFor(props.value, locale)}
          onChange={(event) => props.onChange(event.target.value)}
          aria-label={props.label}
          aria-invalid={props.invalid}
          data-testid={`${props.testId}-amount`}
        />
      </div>
      {props.currency && <FiatEquivalent amount={props.value} currency={props.currency} testId={`${props.testId}-fiat`} />}
      {props.note && <span className="text-xs text-muted">{props.note}</span>}
    </div>
  );
}

/** The coin of an amount, linking to where it is chosen. */
export function CoinChip({ coin, href, testId }: { coin: CoinMeta; href: string; testId: string }) {
  return (
    <a href={href} className="flex items-center gap-2 shrink-0 text-fg font-600 no-underline" data-testid={testId} data-currency={coin.currency}>
      <CoinLogo coin={coin} size={32} />
      <span className="flex flex-col leading-tight">
        <span>{baseTickerOf(coin.currency)}</span>
        {networkTagOf(coin.currency) && <span className="text-xs text-muted font-400">{networkTagOf(coin.currency)}</span>}
      </span>
      <Glyph name="chevron" size={16} className="text-muted" />
    </a>
  );
}

/** One line of a summary: what on the left, how much on the right. */
export function DetailLine({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="flex justify-between gap-3" data-testid={testId}>
      <span className="text-muted">{label}</span>
      <span className="font-600 text-right break-all">{value}</span>
    </div>
  );
}
