import { z } from 'zod';
import { AmountError } from '../lib/amount.ts';
import { parseMoney, type Units } from '../lib/money.ts';
import { findCoin, NETWORKS, type Network } from '../lib/currencies.ts';
import { ConfigError } from './config-error.ts';
import { jsonSetting } from './config-schema.ts';
import type { ChainSettings } from './adapters/chains/port.ts';

export type ChainsConfig = ChainSettings;

/**
 * The chains' part of the configuration (README, Configuration → Chains); read by loadConfig with the rest.
 * A network whose node (or API) is configured runs on it; one without stays on the devnet in development and is off
 * in production (`CHAINS=devnet` is refused there).
 */
/** Mainnet USDT and USDC on Ethereum. */
export const DEFAULT_ETHEREUM_TOKENS: Readonly<Record<string, string>> = {
  USDT_ETH: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
  USDC_ETH: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
};
/** Mainnet USDT on TRON. */
export const DEFAULT_TRON_TOKENS: Readonly<Record<string, string>> = { USDT_TRX: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' };

const networkList = (value: string) => new RegExp(`^(?:(?:${NETWORKS.join('|')}):${value})(?:,(?:${NETWORKS.join('|')}):${value})*$`);
const rpcUrl = z.url({ protocol: /^https?$/ });

export const chainsSchema = {
  CHAINS: z.enum(['devnet', 'off']).optional(),
  /** testnet4 and signet are Bitcoin Core's other test chains: testnet's address formats, their own chain name. */
  CHAIN_ENV: z.enum(['mainnet', 'testnet', 'testnet4', 'signet', 'regtest']).default('mainnet'),
  DEVNET_BLOCK_MS: z.coerce.number().int().min(20).max(600_000).default(2000),
  CHAIN_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).optional(),
  CONFIRMATIONS: z.string().regex(networkList('\\d{1,3}'), 'must look like LITECOIN:6,BITCOIN:2,ETHEREUM:12').optional(),
  /** Renamed to CONFIRMATIONS: refused with a message that says so rather than silently ignored. */
  DEVNET_CONFIRMATIONS: z.string().optional(),
  MIN_DEPOSIT: z
    .string()
    .regex(/^[A-Z0-9_]+:\d{1,12}(?:\.\d{1,18})?(?:,[A-Z0-9_]+:\d{1,12}(?:\.\d{1,18})?)*$/, 'must look like LTC:0.0001,BTC:0.00001')
    .optional(),
  BITCOIN_RPC_URL: rpcUrl.optional(),
  LITECOIN_RPC_URL: rpcUrl.optional(),
  DOGECOIN_RPC_URL: rpcUrl.optional(),
  FEE_RATE_FALLBACK: z.string().regex(/^(?:BITCOIN|LITECOIN|DOGECOIN):\d{1,9}(?:,(?:BITCOIN|LITECOIN|DOGECOIN):\d{1,9})*$/, 'must look like BITCOIN:20,LITECOIN:10,DOGECOIN:1000 (sat/vB)').optional(),
  RBF_AFTER_BLOCKS: z.coerce.number().int().min(1).max(1000).default(6),
  MAX_FEE_RATE: z.string().regex(/^(?:BITCOIN|LITECOIN|DOGECOIN):[1-9]\d{0,8}(?:,(?:BITCOIN|LITECOIN|DOGECOIN):[1-9]\d{0,8})*$/, 'must look like BITCOIN:500,LITECOIN:200 (sat/vB)').optional(),
  UTXO_BATCH_SECONDS: z.coerce.number().int().min(0).max(3600).default(0),
  UTXO_BATCH_MAX_OUTPUTS: z.coerce.number().int().min(2).max(500).default(50),
  UTXO_CONSOLIDATE_BELOW: z.string().regex(/^(?:BITCOIN|LITECOIN|DOGECOIN):[1-9]\d{0,8}(?:,(?:BITCOIN|LITECOIN|DOGECOIN):[1-9]\d{0,8})*$/, 'must look like BITCOIN:5,LITECOIN:2 (sat/vB)').optional(),
  ETHEREUM_RPC_URL: z.url({ protocol: /^(?:https?|wss?)$/ }).optional(),
  ETHEREUM_TOKENS: jsonSetting(z.record(z.string().regex(/^[A-Z0-9_]+_ETH$/), z.string().regex(/^0x[0-9a-fA-F]{40}$/)), 'must be JSON like {"USDT_ETH":"0xdAC1…"}').optional(),
  REPLACE_AFTER_BLOCKS: z.coerce.number().int().min(1).max(1000).default(12),
  TON_API_URL: rpcUrl.optional(),
  TON_API_KEY: z.string().min(1).max(200).optional(),
  TRON_API_URL: rpcUrl.optional(),
  TRON_API_KEY: z.string().min(1).max(200).optional(),
  TRON_TOKENS: jsonSetting(z.record(z.string().regex(/^[A-Z0-9_]+_TRX$/), z.string().regex(/^T[1-9A-HJ-NP-Za-km-z]{33}$/)), 'must be JSON like {"USDT_TRX":"TR7N…"}').optional(),
};

type Parsed = { [K in keyof typeof chainsSchema]?: z.infer<(typeof chainsSchema)[K]> | undefined };

export function chainsConfig(e: Parsed, mode: 'devnet' | 'off'): ChainsConfig {
  if (e.DEVNET_CONFIRMATIONS !== undefined) throw new ConfigError('DEVNET_CONFIRMATIONS was renamed CONFIRMATIONS (it applies to every adapter): set CONFIRMATIONS instead');
  const chainEnv = e.CHAIN_ENV ?? 'mainnet';
  const bitcoinTest = chainEnv === 'testnet4' || chainEnv === 'signet' ? chainEnv : undefined;
  return Object.freeze({
    mode,
    env: chainEnv === 'testnet4' || chainEnv === 'signet' ? 'testnet' : chainEnv,
    blockMs: e.DEVNET_BLOCK_MS ?? 2000,
    callTimeoutMs: e.CHAIN_CALL_TIMEOUT_MS,
    confirmations: Object.freeze(pairs(e.CONFIRMATIONS, Number) as Partial<Record<Network, number>>),
    minDeposit: Object.freeze(parseMinDeposit(e.MIN_DEPOSIT)),
    utxo: Object.freeze({
      nodes: Object.freeze({ BITCOIN: e.BITCOIN_RPC_URL, LITECOIN: e.LITECOIN_RPC_URL, DOGECOIN: e.DOGECOIN_RPC_URL }),
      feeRateFallback: Object.freeze(pairs(e.FEE_RATE_FALLBACK, BigInt)),
      rbfAfterBlocks: e.RBF_AFTER_BLOCKS ?? 6,
      maxFeeRate: Object.freeze(pairs(e.MAX_FEE_RATE, BigInt)),
      testChain: bitcoinTest ?? 'test',
      batchSeconds: e.UTXO_BATCH_SECONDS ?? 0,
      batchMaxOutputs: e.UTXO_BATCH_MAX_OUTPUTS ?? 50,
      consolidateBelow: Object.freeze(pairs(e.UTXO_CONSOLIDATE_BELOW, BigInt)),
    }),
    evm: Object.freeze({ rpcUrl: e.ETHEREUM_RPC_URL, tokens: Object.freeze({ ...DEFAULT_ETHEREUM_TOKENS, ...e.ETHEREUM_TOKENS }), replaceAfterBlocks: e.REPLACE_AFTER_BLOCKS ?? 12 }),
    ton: Object.freeze({ apiUrl: e.TON_API_URL, apiKey: e.TON_API_KEY }),
    tron: Object.freeze({ apiUrl: e.TRON_API_URL, apiKey: e.TRON_API_KEY, tokens: Object.freeze({ ...DEFAULT_TRON_TOKENS, ...e.TRON_TOKENS }) }),
  });
}

/** "A:1,B:2" (already checked by the schema) to a map of parsed values. */
export function pairs<T>(value: string | undefined, parse: (text: string) => T): Record<string, T> {
  const map: Record<string, T> = {};
  for (const pair of value ? value.split(',') : []) {
    const [key, text] = pair.split(':');
    if (key && text) map[key] = parse(text);
  }
  return map;
}

/** "LTC:0.0001,BTC:0.00001" to atomic units per currency; an unknown currency or too many decimals is a mistake. */
function parseMinDeposit(value: string | undefined): Record<string, Units> {
  const map: Record<string, Units> = {};
  for (const [currency, text] of Object.entries(pairs(value, String))) {
    const coin = findCoin(currency);
    if (!coin) throw new ConfigError(`MIN_DEPOSIT names ${currency}, which is not a currency of this wallet`);
    try {
      map[currency] = parseMoney(currency, text).units;
    } catch (error) {
      if (error instanceof AmountError) throw new ConfigError(`MIN_DEPOSIT for ${currency} is invalid: ${error.message}`);
      throw error;
    }
  }
  return map;
}
