import { COINS, visibleCoins } from '../../../src/lib/currencies.ts';
import type { AssetItem, CoinCatalogue, Transaction } from '../../../src/api/wallet.ts';

/** A catalogue as the production gateway sends it, from the shipped coin list. */
export const CATALOGUE: CoinCatalogue = {
  fiat: [{ currency: 'USD', name: 'US Dollar', symbol: '$' }],
  crypto: visibleCoins(COINS, true).map((coin) => ({ ...coin })),
};

export function balance(currency: string, totalAvailable = '0', extra: Partial<AssetItem> = {}): AssetItem {
  return { currency, isCrypto: true, isToken: currency.includes('_'), totalAvailable, onHold: '0', depositAddress: `addr-${currency}`, ...extra };
}

export const RATES = { BTC: { USD: '65000.12' }, ETH: { USD: '3000' }, USDT_TRX: { USD: '1.0001' }, TRX: { USD: '0.12' } };

export function transaction(extra: Partial<Transaction> = {}): Transaction {
  return {
    id: 'tx-1',
    currency: 'BTC',
    direction: 'DEPOSIT',
    transactionType: 'DEPOSIT',
    state: 'COMPLETED',
    amount: '0.01',
    fee: '0',
    from: 'bc1qsender0000000000000000000000000000',
    to: 'bc1qreceiver00000000000000000000000000',
    hash: 'abc123',
    createdDate: new Date(2025, 2, 5, 9, 30).toISOString(),
    ...extra,
  };
}
