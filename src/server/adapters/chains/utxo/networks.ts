/**
 * What differs between Bitcoin, Litecoin and Dogecoin for the adapter: the script the custody's keys use (P2WPKH,
 * or legacy P2PKH on Dogecoin), dust, fee defaults and ceilings, the node's names for its chain, and the dialect of
 * its RPC (Dogecoin Core 1.14's `getblock` takes a boolean); address parameters come from the custody's addressing
 * under CHAIN_ENV.
 */
import type { ChainEnv, UtxoNetwork, UtxoParams } from '../port.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

export type { UtxoNetwork };
export const UTXO_NETWORKS: readonly UtxoNetwork[] = ['BITCOIN', 'LITECOIN', 'DOGECOIN'];

/** The test chain under CHAIN_ENV=testnet: testnet3 (`test`), or Bitcoin Core's testnet4 or signet. */
export type TestChain = 'test' | 'testnet4' | 'signet';

export type UtxoProfile = {
  network: UtxoNetwork;
  coin: string;
  /** Address parameters under CHAIN_ENV, from the custody's addressing (`ChainAddressing.utxoParams`). */
  params: UtxoParams;
  /** P2WPKH (BTC, LTC) or legacy P2PKH (DOGE). */
  segwit: boolean;
  /** Change below this is given to the fee instead (atomic units): an output worth less than spending it. */
  dust: Units;
  /** Units per virtual byte when the node estimates nothing and FEE_RATE_FALLBACK does not say. */
  defaultFallbackRate: bigint;
  /** Units per virtual byte no transaction of ours pays above when MAX_FEE_RATE does not say. */
  defaultMaxFeeRate: bigint;
  /** The `getblockchaininfo().chain` names that match CHAIN_ENV. */
  nodeChains: readonly string[];
  /**
   * `getblock`'s second argument: Dogecoin Core 1.14 before 1.14.7 takes only a boolean (`true`: the block with
   * transaction ids; an integer is "JSON value is not a boolean as expected"), Bitcoin and Litecoin Core a verbosity.
   */
  booleanGetblock: boolean;
  /**
   * The node version (`getnetworkinfo().version`) from which its `estimatesmartfee` is trusted: Dogecoin Core did
   * not port fee estimation before 1.14.7 (its release notes: the answers were "non-functional data").
   */
  estimatesFromVersion: number;
};

const DUST: Record<UtxoNetwork, Units> = { BITCOIN: unitsOf(1_000n), LITECOIN: unitsOf(10_000n), DOGECOIN: unitsOf(1_000_000n) };
const FALLBACK: Record<UtxoNetwork, bigint> = { BITCOIN: 20n, LITECOIN: 10n, DOGECOIN: 1_000n };
// Far above what the networks charge (BTC's 2023 peaks ~500, LTC ~10, DOGE's recommended 0.01 DOGE/kB = 1000).
const MAX_FEE_RATE: Record<UtxoNetwork, bigint> = { BITCOIN: 500n, LITECOIN: 200n, DOGECOIN: 100_000n };
const COIN: Record<UtxoNetwork, string> = { BITCOIN: 'BTC', LITECOIN: 'LTC', DOGECOIN: 'DOGE' };
/** Dogecoin Core 1.14.7 (CLIENT_VERSION 1140700): fee estimation ported, `getblock` verbosity levels added. */
const DOGECOIN_ESTIMATES_FROM = 1_140_700;

/** The chain names a node may report under CHAIN_ENV: testnet4 and signet are Bitcoin's; the others stay on `test`. */
function nodeChains(network: UtxoNetwork, env: ChainEnv, testChain: TestChain): readonly string[] {
  if (env === 'mainnet') return ['main'];
  if (env === 'regtest') return ['regtest'];
  return [network === 'BITCOIN' ? testChain : 'test'];
}

export function utxoProfile(network: UtxoNetwork, env: ChainEnv, params: UtxoParams, testChain: TestChain = 'test'): UtxoProfile {
  return {
    network,
    coin: COIN[network],
    params,
    segwit: network !== 'DOGECOIN',
    dust: DUST[network],
    defaultFallbackRate: FALLBACK[network],
    defaultMaxFeeRate: MAX_FEE_RATE[network],
    nodeChains: nodeChains(network, env, testChain),
    booleanGetblock: network === 'DOGECOIN',
    estimatesFromVersion: network === 'DOGECOIN' ? DOGECOIN_ESTIMATES_FROM : 0,
  };
}

export function isUtxoNetwork(network: string): network is UtxoNetwork {
  return (UTXO_NETWORKS as readonly string[]).includes(network);
}

/**
 * The internal (change) chain's path for `index`, from the external path the custody's addressing gives
 * (m/84'/2'/0'/0/i → m/84'/2'/0'/1/i): what a standard wallet restoring the seed also scans.
 */
export function changePath(externalPath: string, index: number): string {
  const match = /^(.*)\/0\/\d+$/.exec(externalPath);
  if (!match?.[1]) throw new Error(`not an external BIP32 path: ${externalPath}`);
  return `${match[1]}/1/${index}`;
}
