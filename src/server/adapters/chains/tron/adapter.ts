/**
 * The TRON adapter: TRX and the TRC-20 tokens of TRON_TOKENS on a TronGrid-compatible full-node HTTP API
 * (README.md in this folder). Reading is reader.ts, the hot wallet and sweeps wallet.ts, transactions codec.ts.
 */
import type pg from 'pg';
import { findCoin } from '../../../../lib/currencies.ts';
import type { ChainAdapter, ChainAddressing, ChainEnv } from '../port.ts';
import { createTronApi } from './api.ts';
import { toHexAddress } from './codec.ts';
import { createTronKeys } from './keys.ts';
import type { WalletKeys } from '../../keys/port.ts';
import { keysOf } from '../../keys/wallet-keys.ts';
import { createTronReader } from './reader.ts';
import { createTronStore } from './store.ts';
import { createTronWallet } from './wallet.ts';

/** Confirmations unless CONFIRMATIONS says otherwise: TRON's blocks are irreversible (solidified) 19 blocks deep. */
export const TRON_DEFAULT_CONFIRMATIONS = 19;

const EXPLORERS: Record<ChainEnv, string | undefined> = {
  mainnet: 'https://tronscan.org/#/transaction/{tx}',
  testnet: 'https://nile.tronscan.org/#/transaction/{tx}',
  regtest: undefined,
};

export type TronOptions = {
  apiUrl: string;
  apiKey?: string | undefined;
  /** currency → TRC-20 contract (T…); currencies this wallet does not list on TRON are ignored. */
  tokens: Readonly<Record<string, string>>;
  confirmations?: number | undefined;
  env: ChainEnv;
  /** The custody keys (public only outside the signer); `seed`: every key of a bare seed (tests). */
  keys?: WalletKeys | undefined;
  seed?: Uint8Array | undefined;
  addresses: ChainAddressing;
  /** How long a signed transaction stays valid after its reference block (tests shorten it). */
  expirationMs?: number | undefined;
  /** CHAIN_CALL_TIMEOUT_MS: each call's timeout outside a request; default the client's own. */
  callTimeoutMs?: number | undefined;
};

export function createTronAdapter(pool: pg.Pool, options: TronOptions): ChainAdapter {
  const api = createTronApi({ apiUrl: options.apiUrl, apiKey: options.apiKey, ...(options.callTimeoutMs === undefined ? {} : { timeoutMs: options.callTimeoutMs }) });
  const store = createTronStore(pool);
  const contracts = new Map(Object.entries(options.tokens).filter(([currency]) => findCoin(currency)?.network === 'TRON'));
  const tokens = new Map([...contracts].map(([currency, contract]) => [toHexAddress(contract), currency]));
  const confirmations = options.confirmations ?? TRON_DEFAULT_CONFIRMATIONS;
  const keys = createTronKeys(keysOf(options), options.addresses);
  return {
    networks: ['TRON'],
    requiredConfirmations: () => confirmations,
    explorerUrl: () => EXPLORERS[options.env],
    ...createTronReader(pool, api, { tokens, store, hotWallet: async () => (await keys.hotWallet()).address }),
    ...createTronWallet(pool, { api, store, keys, contracts, expirationMs: options.expirationMs }),
  };
}
