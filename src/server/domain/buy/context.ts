/**
 * What every part of the buy desk works with: its dependencies, and the checks and prices that need them (is
 * buying on, is the coin sold, is the fiat offered, what does a coin cost with the fee now).
 */
import type pg from 'pg';
import type { DepositAddressGuard } from '../deposit-address-guard.ts';
import type { CoinMeta } from '../../../lib/currencies.ts';
import type { Logger } from '../../log.ts';
import type { PriceTable, RatesPort } from '../../adapters/rates/port.ts';
import type { CardProvider } from '../../adapters/card/port.ts';
import type { OnRampProvider } from '../../adapters/onramp/port.ts';
import { requirePrice } from '../rates.ts';
import { honoursFixedRate } from '../slippage.ts';
import { BuyError } from './errors.ts';
import { BUYING_OFF_MESSAGE, withFee, type BuySettings } from './rules.ts';

export type BuyDeps = {
  pool: pg.Pool;
  rates: RatesPort;
  coins: () => readonly CoinMeta[];
  /** The acquirer whose payment the desk credits from card settlement; undefined with an on-ramp or with buying off. */
  provider: CardProvider | undefined;
  /**
   * The on-ramp (MoonPay) that sends the coins on chain itself; undefined with an acquirer. With neither, buying is
   * off: every call but reading an order is refused as unavailable.
   */
  onRamp?: OnRampProvider | undefined;
  /** The token contracts the chain adapters watch, on mainnet only: an on-ramp's coin must be the same token. */
  tokenContracts?: Readonly<Record<string, string>> | undefined;
  settings: BuySettings;
  publicUrl: string;
  log: Logger;
  /** Checks the stored deposit address an on-ramp is told to send the coins to. */
  addressGuard: DepositAddressGuard;
};

/** Buying is on (an acquirer or an on-ramp), or the refusal. */
export function buyingOn(deps: Pick<BuyDeps, 'provider' | 'onRamp'>): void {
  if (!deps.provider && !deps.onRamp) throw new BuyError('B2C_UNAVAILABLE', BUYING_OFF_MESSAGE);
}

/** The card provider, or the refusal when buying is off. */
export function paymentsOn(deps: Pick<BuyDeps, 'provider'>): CardProvider {
  if (!deps.provider) throw new BuyError('B2C_UNAVAILABLE', BUYING_OFF_MESSAGE);
  return deps.provider;
}

export function coinOf(deps: Pick<BuyDeps, 'coins'>, currency: string): CoinMeta {
  const coin = deps.coins().find((c) => c.currency === currency && c.active);
  if (!coin) throw new BuyError('UNKNOWN_CURRENCY', `${currency} is not a currency this wallet sells`);
  return coin;
}

export function checkFiat(deps: Pick<BuyDeps, 'settings'>, fiat: string): void {
  const offered = deps.settings.fiatCurrencies;
  if (!offered.includes(fiat)) throw new BuyError('B2C_FIAT_UNSUPPORTED', `Purchases are paid in ${offered.join(', ')} only`);
}

export async function prices(deps: Pick<BuyDeps, 'rates'>): Promise<PriceTable> {
  return deps.rates.prices().catch((error: unknown) => {
    throw new BuyError('B2C_UNAVAILABLE', 'Rates are unavailable right now. Please try again later.', { cause: error });
  });
}

/** Fiat per coin, 8 decimals, the fee included; no current price of the coin or the fiat refuses (PRICE_UNAVAILABLE). */
export async function rateOf(deps: Pick<BuyDeps, 'rates' | 'settings'>, coin: CoinMeta, fiat: string, table?: PriceTable): Promise<bigint> {
  return withFee(requirePrice(table ?? (await prices(deps)), coin, fiat), deps.settings.feeBps);
}

/**
 * Whether a rate fixed earlier (fiat per coin, fee included) may still be taken: the user gets 1/rate coins per fiat
 * unit, so the desk loses when the current rate has risen above it; beyond the slippage it may not.
 */
export async function fixedRateHolds(deps: Pick<BuyDeps, 'rates' | 'settings'>, coin: CoinMeta, fiat: string, fixed: bigint): Promise<boolean> {
  return honoursFixedRate(await rateOf(deps, coin, fiat), fixed, deps.settings.maxSlippageBps);
}

export async function checkAccount(deps: Pick<BuyDeps, 'pool'>, account: string): Promise<void> {
  const found = await deps.pool.query({ name: 'buy_account_exists', text: 'SELECT 1 FROM wallet_accounts WHERE id = $1', values: [account] });
  if (!found.rowCount) throw new BuyError('ACCOUNT_NOT_FOUND', 'No such account');
}
