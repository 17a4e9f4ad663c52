import { describe, expect, it } from 'vitest';
import { COINS } from '../../../../src/lib/currencies.ts';
import type { OnRampCrypto, OnRampProvider } from '../../../../src/server/adapters/onramp/port.ts';
import type { BuyDeps } from '../../../../src/server/domain/buy/context.ts';
import { matchingOrder, sameChainText, type AwaitingOrder } from '../../../../src/server/domain/buy/onramp-deposits.ts';
import { onRampCoins, onRampFiatOfGeo, roundedUnits } from '../../../../src/server/domain/buy/onramp.ts';
import { statusScreenUrl, STATUS_RANK } from '../../../../src/server/domain/buy/onramp-orders.ts';
import { DEFAULT_BUY_CONFIG } from '../../../../src/server/config-buy.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

const order = (id: string, amount: bigint, extra: Partial<AwaitingOrder> = {}): AwaitingOrder => ({
  id,
  amount: amount.toString(),
  providerTxHash: null,
  providerAmount: null,
  walletTransactionId: `item-${id}`,
  createdAt: new Date(Date.parse('2025-01-24T10:00:00Z') + Number(id.replace(/\D/g, '') || 0) * 1000),
  ...extra,
});

describe("an on-ramp purchase's coins found among the deposits (issue 32 item 5)", () => {
  it('takes the order whose reported hash is the deposit, whatever the amounts', () => {
    const orders = [order('o1', 95_000_000n), order('o2', 10_000_000n, { providerTxHash: '0xABCDEF' })];
    expect(matchingOrder(orders, { txHash: '0xabcdef', amount: unitsOf(1n) })?.id).toBe('o2');
  });

  it('without a reported hash: the reported amount exactly, else an estimate within 5 %, the nearest, then the oldest', () => {
    const orders = [order('o1', 100_000_000n), order('o2', 95_000_000n), order('o3', 95_000_000n), order('o4', 95_000_000n, { providerAmount: '94000000' })];
    expect(matchingOrder(orders, { txHash: '0x1', amount: unitsOf(94_000_000n) })?.id).toBe('o4');
    expect(matchingOrder(orders, { txHash: '0x1', amount: unitsOf(95_100_000n) })?.id).toBe('o2');
    expect(matchingOrder(orders, { txHash: '0x1', amount: unitsOf(99_000_000n) })?.id).toBe('o1');
    // 5 % of 95 is 4.75: 90.25 still fits, 90.2 does not (nor does o4, whose reported amount is another).
    expect(matchingOrder([order('o2', 95_000_000n)], { txHash: '0x1', amount: unitsOf(90_250_000n) })?.id).toBe('o2');
    expect(matchingOrder([order('o2', 95_000_000n), orders[3] as AwaitingOrder], { txHash: '0x1', amount: unitsOf(90_200_000n) })).toBeUndefined();
  });

  it('never takes an order whose provider reported another transaction', () => {
    expect(matchingOrder([order('o1', 95_000_000n, { providerTxHash: '0xother' })], { txHash: '0x1', amount: unitsOf(95_000_000n) })).toBeUndefined();
  });

  it('compares chain text without case, and nothing with nothing', () => {
    expect(sameChainText('0xAbC', '0xaBc')).toBe(true);
    expect(sameChainText(null, null)).toBe(false);
  });
});

describe("the on-ramp's data on the buy screens", () => {
  const provider = (crypto: OnRampCrypto[]): OnRampProvider => ({ cryptoCurrencies: () => Promise.resolve(crypto) }) as unknown as OnRampProvider;
  const deps = (tokenContracts?: Record<string, string>): BuyDeps => ({ coins: () => COINS, settings: DEFAULT_BUY_CONFIG, tokenContracts }) as unknown as BuyDeps;
  const usdc: OnRampCrypto = { code: 'usdc', name: 'USD Coin', network: 'ETHEREUM', contractAddress: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', suspended: false };

  it('sells our USDC coins it sells on the same network, the same token on mainnet, nothing suspended', async () => {
    expect((await onRampCoins(deps(), provider([usdc]))).map((c) => [c.coin.currency, c.code])).toEqual([['USDC_ETH', 'usdc']]);
    expect(await onRampCoins(deps({ USDC_ETH: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' }), provider([usdc]))).toHaveLength(1);
    expect(await onRampCoins(deps({ USDC_ETH: '0x0000000000000000000000000000000000000001' }), provider([usdc]))).toEqual([]);
    expect(await onRampCoins(deps(), provider([{ ...usdc, suspended: true }]))).toEqual([]);
    expect(await onRampCoins(deps(), provider([{ ...usdc, network: undefined, code: 'usdc_polygon' }]))).toEqual([]);
    // USDT is not sold (SPEC §2: only USDC coins), even where the provider has it.
    expect(await onRampCoins(deps(), provider([{ ...usdc, code: 'usdt', name: 'Tether' }]))).toEqual([]);
  });

  it("picks a country's own fiat when only the geoId came", () => {
    expect(onRampFiatOfGeo(deps(), 'DE')).toBe('EUR');
    expect(onRampFiatOfGeo(deps(), 'US')).toBe('USD');
    expect(onRampFiatOfGeo(deps(), 'XX')).toBe('USD');
  });

  it('reads its amounts into units, down for coins and up for what is paid', () => {
    expect(roundedUnits('95.40184', 6, 'down')).toBe(95_401_840n);
    expect(roundedUnits('95.4018449', 6, 'down')).toBe(95_401_844n);
    expect(roundedUnits('20.001', 2, 'up')).toBe(2001n);
    expect(roundedUnits('20', 2, 'up')).toBe(2000n);
    expect(() => roundedUnits('-1', 2, 'up')).toThrow();
  });

  it("sends the buyer back to the order's status screen, and ranks statuses so none moves back", () => {
    expect(statusScreenUrl('https://wallet.example/home/asset/USDC_ETH', 'USDC_ETH', 'abc')).toBe('https://wallet.example/home/asset/USDC_ETH/transaction/abc/FIAT_DEPOSIT');
    expect(STATUS_RANK.pending).toBeLessThan(STATUS_RANK.waitingPayment);
    expect(STATUS_RANK.waitingPayment).toBeLessThan(STATUS_RANK.completed);
    expect(STATUS_RANK.failed).toBe(STATUS_RANK.completed);
  });
});
