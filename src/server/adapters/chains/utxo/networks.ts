/**
 * What differs between Bitcoin, Litecoin and Dogecoin for the adapter: the script the custody's keys use (P2WPKH,
 * or legacy P2PKH on Dogecoin), dust, fee defaults and the node's name for its chain; address parameters come from
 * the custody's addressing under CHAIN_ENV.
 */
import type { ChainEnv, UtxoNetwork, UtxoParams } from '../port.ts';

export type { UtxoNetwork };
export const UTXO_NETWORKS: readonly UtxoNetwork[] = ['BITCOIN', 'LITECOIN', 'DOGECOIN'];

export type UtxoProfile = {
  network: UtxoNetwork;
  coin: string;
  /** Address parameters under CHAIN_ENV, from the custody's addressing (`ChainAddressing.utxoParams`). */
  params: UtxoParams;
  /** P2WPKH (BTC, LTC) or legacy P2PKH (DOGE). */
  segwit: boolean;
  /** Change below this is given to the fee instead (atomic units): an output worth less than spending it. */
  dust: bigint;
  /** Units per virtual byte when the node estimates nothing and FEE_RATE_FALLBACK does not say. */
  defaultFallbackRate: bigint;
  /** `getblockchaininfo().chain` for each CHAIN_ENV. */
  nodeChain: string;
};

const DUST: Record<UtxoNetwork, bigint> = { BITCOIN: 1_000n, LITECOIN: 10_000n, DOGECOIN: 1_000_000n };
const FALLBACK: Record<UtxoNetwork, bigint> = { BITCOIN: 20n, LITECOIN: 10n, DOGECOIN: 1_000n };
const COIN: Record<UtxoNetwork, string> = { BITCOIN: 'BTC', LITECOIN: 'LTC', DOGECOIN: 'DOGE' };
const NODE_CHAIN: Record<ChainEnv, string> = { mainnet: 'main', testnet: 'test', regtest: 'regtest' };

export function utxoProfile(network: UtxoNetwork, env: ChainEnv, params: UtxoParams): UtxoProfile {
  return {
    network,
    coin: COIN[network],
    params,
    segwit: network !== 'DOGECOIN',
    dust: DUST[network],
    defaultFallbackRate: FALLBACK[network],
    nodeChain: NODE_CHAIN[env],
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
