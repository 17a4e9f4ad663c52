/**
 * The hot wallet kept between its bounds (README, "Hot and cold"), per network, by the worker's
 * `custody.hot-cold:<network>` job:
 * - UTXO_CONSOLIDATE_BELOW: while the network's fee rate is at most the threshold, the deposit outputs are moved into
 *   the hot wallet's own address (custody-movements.ts `consolidateDeposits`), so withdrawals spend few, large outputs;
 * - HOT_WALLET_MAX: what the custody holds above the ceiling goes to the operator's cold wallet (COLD_WALLET: an address,
 *   or the next receiving address of its xpub) as a cold sweep (`orderColdSweep`: the same path as `npm run custody --
 *   sweep-to-cold`, recorded before it is signed, booked once confirmed, reopened by a reorganisation), one at a time;
 *   where the worker holds no key, both are signed by the signer (`cold-sweep`, `consolidation`), which checks them
 *   against its own HOT_WALLET_MAX, COLD_WALLET and UTXO_CONSOLIDATE_BELOW (signing.ts `coldSweepToSign`);
 * - HOT_WALLET_MIN is the floor the HotWalletLow alert compares holdings with (metrics.ts); withdrawals the hot wallet
 *   cannot pay wait for it (withdrawals/worker.ts).
 */
import type pg from 'pg';
import { NETWORK_INFO, type Network } from '../../lib/currencies.ts';
import { unitsOf } from '../../lib/money.ts';
import type { ChainAddressing, ChainEnv, HotWalletFees } from '../adapters/chains/port.ts';
import type { Logger } from '../log.ts';
import { extendedKeyAddress } from './addresses.ts';
import { consolidateDeposits, CustodyMovementError, orderColdSweep, type MovementChain } from './custody-movements.ts';

/** HOT_WALLET_MAX, HOT_WALLET_MIN (atomic units of the network's coin) and COLD_WALLET per network (config-hot-cold.ts). */
export type HotColdConfig = Readonly<{
  max: Readonly<Partial<Record<Network, bigint>>>;
  min: Readonly<Partial<Record<Network, bigint>>>;
  /** The operator's cold address, or the account xpub whose next receiving address each sweep pays. */
  cold: Readonly<Partial<Record<Network, ColdWallet>>>;
}>;

export type ColdWallet = Readonly<{ address: string } | { extendedKey: string }>;

/** A COLD_WALLET that is no address (or xpub) of its network under CHAIN_ENV: the custody does not start. */
export class ColdWalletError extends Error {}

/** After a ceiling sweep the hot wallet could not pay, the next waits this long (the funds are on their way in). */
const RETRY_AFTER_FAILED_MS = 600_000;

export type HotColdDeps = { chain: MovementChain & Partial<Pick<HotWalletFees, 'estimateFee'>>; addresses: ChainAddressing; env: ChainEnv; settings: HotColdConfig; consolidateBelow: Partial<Record<Network, bigint>>; log: Logger };

/** Whether `network` has anything for the job to do. */
export function keepsHotWallet(deps: Pick<HotColdDeps, 'settings' | 'consolidateBelow'>, network: Network): boolean {
  return (deps.settings.max[network] !== undefined && deps.settings.cold[network] !== undefined) || deps.consolidateBelow[network] !== undefined;
}

/** Refuses at start a COLD_WALLET that is not a valid address (or xpub) of its network under CHAIN_ENV. */
export function checkColdWallets(settings: HotColdConfig, addresses: ChainAddressing, env: ChainEnv): void {
  for (const [network, cold] of Object.entries(settings.cold) as [Network, ColdWallet][]) {
    let address: string;
    try {
      address = coldAddress(cold, network, 0, env);
    } catch (error) {
      throw new ColdWalletError(`COLD_WALLET for ${network} is not an extended public key of it: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!addresses.isValid(network, address)) throw new ColdWalletError(`COLD_WALLET for ${network} (${address}) is not a valid ${network} address for this CHAIN_ENV`);
  }
}

/** The cold address a sweep pays: COLD_WALLET's address, or its xpub's receiving address `index`. */
export function coldAddress(cold: ColdWallet, network: Network, index: number, env: ChainEnv): string {
  if ('address' in cold) return cold.address;
  if (network === 'TON') throw new Error('TON has no extended public keys');
  return extendedKeyAddress(cold.extendedKey, network, index, env);
}

/** One round for `network`: a consolidation when fees are low, then the excess above the ceiling to cold. */
export async function keepHotWallet(pool: pg.Pool, deps: HotColdDeps, network: Network): Promise<void> {
  const below = deps.consolidateBelow[network];
  if (below !== undefined) {
    const consolidation = await consolidateDeposits(pool, deps.chain, network, below);
    if (consolidation) deps.log.info({ network, movement: consolidation.id, amount: consolidation.amount, tx: consolidation.txHash }, 'deposit outputs consolidated into the hot wallet');
  }
  await sweepExcess(pool, deps, network);
}

async function sweepExcess(pool: pg.Pool, deps: HotColdDeps, network: Network): Promise<void> {
  const ceiling = deps.settings.max[network];
  const cold = deps.settings.cold[network];
  if (ceiling === undefined || cold === undefined) return;
  // One movement of the network at a time: until it is booked, the holdings still count what it moves.
  const busy = await pool.query<{ open: number; failed_lately: boolean; sweeps: number }>(
    `SELECT count(*) FILTER (WHERE state IN ('SIGNING', 'SIGNED', 'BROADCAST'))::int AS open,
            coalesce(bool_or(state = 'FAILED' AND idempotency_key LIKE 'hot-ceiling:%' AND closed_at > now() - make_interval(secs => $2)), false) AS failed_lately,
            count(*) FILTER (WHERE idempotency_key LIKE 'hot-ceiling:%')::int AS sweeps
       FROM custody_movements WHERE network = $1`,
    [network, RETRY_AFTER_FAILED_MS / 1000],
  );
  const { open, failed_lately: failedLately, sweeps } = busy.rows[0] ?? { open: 0, failed_lately: false, sweeps: 0 };
  if (open > 0 || failedLately) return;
  const coin = NETWORK_INFO[network].coin;
  const held = (await deps.chain.holdings(network))[coin] ?? 0n;
  if (held <= ceiling) return;
  const address = coldAddress(cold, network, sweeps, deps.env);
  let amount = unitsOf(held - ceiling);
  // What the hot wallet can pay now, its fee aside (on account-based networks deposits not collected yet count in the holdings, not here).
  if (deps.chain.hotWalletFunds) {
    const fee = deps.chain.estimateFee ? (await deps.chain.estimateFee({ network, currency: coin, toAddress: address, amount })).amount : 0n;
    const payable = unitsOf((await deps.chain.hotWalletFunds(network, coin)) - fee);
    if (payable < amount) amount = payable;
  }
  // Not for crumbs: at least 1 % of the ceiling (a dust output would be refused by the node).
  if (amount <= 0n || amount < ceiling / 100n) return;
  try {
    const movement = await orderColdSweep(pool, deps, { network, address, amount: unitsOf(amount), key: `hot-ceiling:${network}:${sweeps}` });
    deps.log.info({ network, movement: movement.id, amount: movement.amount, to: address, state: movement.state }, 'hot wallet above HOT_WALLET_MAX: the excess is on its way to cold storage');
  } catch (error) {
    if (!(error instanceof CustodyMovementError)) throw error;
    deps.log.warn({ err: error, network, amount: amount.toString() }, 'hot wallet above HOT_WALLET_MAX but the sweep to cold could not be made now');
  }
}
