import { useState } from 'react';
import type { CoinMeta } from '../../lib/currencies.ts';
import { logoUrl } from '../../stores/catalogue.ts';

type LogoCoin = Pick<CoinMeta, 'logoName' | 'secondaryLogoName' | 'baseCurrency'>;

/** A coin's logo; a token carries its network's logo small in the corner (SPEC §3). A missing file shows the ticker. */
export function CoinLogo({ coin, size = 40 }: { coin: LogoCoin; size?: number }) {
  const [failed, setFailed] = useState(false);
  const [secondaryFailed, setSecondaryFailed] = useState(false);
  const small = Math.round(size * 0.45);
  return (
    <span className="relative inline-flex shrink-0" style={{ width: size, height: size }}>
      {failed ? (
        <span className="w-full h-full rounded-full bg-line text-fg inline-flex items-center justify-center font-700" style={{ fontSize: size * 0.3 }}>
          {coin.baseCurrency.slice(0, 4)}
        </span>
      ) : (
        <img src={logoUrl(coin.logoName)} alt="" width={size} height={size} className="rounded-full" onError={() => setFailed(true)} />
      )}
      {coin.secondaryLogoName && !secondaryFailed && (
        <img
          src={logoUrl(coin.secondaryLogoName)}
          alt=""
          width={small}
          height={small}
          className="absolute rounded-full bg-bg"
          style={{ right: -2, bottom: -2, boxShadow: '0 0 0 2px var(--c-bg)' }}
          onError={() => setSecondaryFailed(true)}
        />
      )}
    </span>
  );
}
