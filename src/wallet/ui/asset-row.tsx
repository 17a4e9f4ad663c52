import type { ReactNode } from 'react';
import type { CoinMeta } from '../../lib/currencies.ts';
import { CoinLogo } from './coin-logo.tsx';

type RowProps = {
  coin: CoinMeta;
  /** Under the name: the network, or anything the list wants. */
  subtitle?: ReactNode;
  /** Right-hand side: amount and value, a toggle, a chevron. */
  end?: ReactNode;
  href?: string;
  onClick?: () => void;
  disabled?: boolean;
  testId?: string;
};

/** One asset in a list: logo (with the network's for a token), name, and what the list shows at the end. */
export function AssetRow({ coin, subtitle, end, href, onClick, disabled, testId }: RowProps) {
  const body = (
    <>
      <CoinLogo coin={coin} />
      <span className="flex-1 min-w-0 flex flex-col items-start">
        <span className="font-600 max-w-full break-words leading-snug">{coin.name}</span>
        {subtitle !== undefined && <span className="text-sm text-muted max-w-full break-words leading-snug">{subtitle}</span>}
      </span>
      {end}
    </>
  );
  const className = 'asset-row';
  if (href)
    return (
      <a href={href} className={className} data-testid={testId} data-currency={coin.currency}>
        {body}
      </a>
    );
  if (onClick)
    return (
      <button type="button" className={className} onClick={onClick} disabled={disabled} data-testid={testId} data-currency={coin.currency}>
        {body}
      </button>
    );
  return (
    <div className={className} data-testid={testId} data-currency={coin.currency}>
      {body}
    </div>
  );
}

/** The right-hand amount and fiat value of an asset row. */
export function AmountEnd({ amount, value }: { amount: string; value?: string }) {
  return (
    <span className="flex flex-col items-end shrink-0 text-right">
      <span className="font-600 whitespace-nowrap">{amount}</span>
      {value !== undefined && <span className="text-sm text-muted whitespace-nowrap">{value}</span>}
    </span>
  );
}
