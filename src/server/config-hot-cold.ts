import { z } from 'zod';
import { AmountError, formatUnits, parseDecimal } from '../lib/amount.ts';
import { NETWORK_INFO, NETWORKS, findCoin, type Network } from '../lib/currencies.ts';
import { ConfigError } from './config-error.ts';
import { pairs } from './config-chains.ts';
import type { ColdWallet, HotColdConfig } from './domain/hot-cold.ts';

export type { HotColdConfig };

/**
 * The hot wallet's bounds per network (README, Configuration → Hot and cold): above HOT_WALLET_MAX the worker sweeps
 * the excess to COLD_WALLET (domain/hot-cold.ts); under HOT_WALLET_MIN the HotWalletLow alert fires. Amounts are in
 * the network's coin, in the `NETWORK:value` lists of CONFIRMATIONS and MAX_FEE_RATE.
 */
const amountList = /^(?:[A-Z]+:\d{1,12}(?:\.\d{1,18})?)(?:,[A-Z]+:\d{1,12}(?:\.\d{1,18})?)*$/;

export const hotColdSchema = {
  HOT_WALLET_MAX: z.string().regex(amountList, 'must look like LITECOIN:50,ETHEREUM:20 (in the network’s coin)').optional(),
  HOT_WALLET_MIN: z.string().regex(amountList, 'must look like LITECOIN:5,ETHEREUM:2 (in the network’s coin)').optional(),
  COLD_WALLET: z.string().regex(/^(?:[A-Z]+:[A-Za-z0-9]{20,120})(?:,[A-Z]+:[A-Za-z0-9]{20,120})*$/, 'must look like LITECOIN:ltc1q…,ETHEREUM:0x… (an address or an xpub per network)').optional(),
};

type HotColdEnv = { [K in keyof typeof hotColdSchema]?: string | undefined };

export function hotColdConfig(e: HotColdEnv, production: boolean): HotColdConfig {
  const max = amounts('HOT_WALLET_MAX', e.HOT_WALLET_MAX);
  const min = amounts('HOT_WALLET_MIN', e.HOT_WALLET_MIN);
  const cold: Partial<Record<Network, ColdWallet>> = {};
  for (const [network, value] of Object.entries(pairs(e.COLD_WALLET, String))) {
    const known = knownNetwork('COLD_WALLET', network);
    // An account's extended public key (base58, 111 characters: xpub, tpub, zpub, Ltub…); anything else is an address, checked against CHAIN_ENV at start.
    cold[known] = /^[a-zA-Z]{4}[1-9A-HJ-NP-Za-km-z]{107}$/.test(value) && known !== 'TON' ? { extendedKey: value } : { address: value };
  }
  for (const [network, ceiling] of Object.entries(max) as [Network, bigint][]) {
    const floor = min[network];
    if (floor !== undefined && floor >= ceiling) throw new ConfigError(`HOT_WALLET_MIN for ${network} must be below its HOT_WALLET_MAX`);
    if (!cold[network] && production) throw new ConfigError(`HOT_WALLET_MAX sets a ceiling on ${network} without a COLD_WALLET for it: the excess would have nowhere to go`);
  }
  return Object.freeze({ max: Object.freeze(max), min: Object.freeze(min), cold: Object.freeze(cold) });
}

function knownNetwork(name: string, network: string): Network {
  if (!(NETWORKS as readonly string[]).includes(network)) throw new ConfigError(`${name} names ${network}, which is not a network of this wallet (${NETWORKS.join(', ')})`);
  return network as Network;
}

/** "LITECOIN:50" to atomic units of the network's coin. */
function amounts(name: string, value: string | undefined): Partial<Record<Network, bigint>> {
  const map: Partial<Record<Network, bigint>> = {};
  for (const [network, text] of Object.entries(pairs(value, String))) {
    const known = knownNetwork(name, network);
    const coin = findCoin(NETWORK_INFO[known].coin);
    try {
      map[known] = parseDecimal(text, coin?.decimals ?? 0);
    } catch (error) {
      if (error instanceof AmountError) throw new ConfigError(`${name} for ${network} is invalid: ${error.message}`);
      throw error;
    }
  }
  return map;
}

/**
 * SIGNER_DAILY_MAX: per network, in its coin (`LITECOIN:10,ETHEREUM:5`, as HOT_WALLET_MAX), or per token by its
 * currency in the token's own units (`USDT_TRX:20000`, a network's coin does not measure its tokens): the most the
 * signer signs out in any 24 hours, in atomic units keyed by currency.
 */
export function signerDailyMax(value: string | undefined): Readonly<Record<string, bigint>> {
  const caps: Record<string, bigint> = {};
  for (const [key, text] of Object.entries(pairs(value, String))) {
    const coin = (NETWORKS as readonly string[]).includes(key) ? findCoin(NETWORK_INFO[key as Network].coin) : findCoin(key);
    if (!coin || !(coin.token || (NETWORKS as readonly string[]).includes(key))) {
      throw new ConfigError(`SIGNER_DAILY_MAX names ${key}: give a network (${NETWORKS.join(', ')}), capped in its coin, or a token's currency (e.g. USDT_TRX)`);
    }
    if (caps[coin.currency] !== undefined) throw new ConfigError(`SIGNER_DAILY_MAX caps ${coin.currency} twice`);
    try {
      caps[coin.currency] = parseDecimal(text, coin.decimals);
    } catch (error) {
      if (error instanceof AmountError) throw new ConfigError(`SIGNER_DAILY_MAX for ${key} is invalid: ${error.message}`);
      throw error;
    }
  }
  return Object.freeze(caps);
}

/**
 * The floors the HotWalletLow alert compares holdings with, per currency (metrics.ts): HOT_WALLET_MINIMUM's (any
 * currency, tokens too) and HOT_WALLET_MIN's (each network's coin); one currency floored by both is a mistake.
 */
export function alertFloors(perCurrency: Readonly<Record<string, string>>, hotCold: HotColdConfig): Readonly<Record<string, string>> {
  const floors: Record<string, string> = { ...perCurrency };
  for (const [network, units] of Object.entries(hotCold.min) as [Network, bigint][]) {
    const currency = NETWORK_INFO[network].coin;
    if (floors[currency] !== undefined) throw new ConfigError(`HOT_WALLET_MIN (${network}) and HOT_WALLET_MINIMUM (${currency}) both set a floor for ${currency}: keep one`);
    floors[currency] = formatUnits(units, findCoin(currency)?.decimals ?? 0);
  }
  return Object.freeze(floors);
}
