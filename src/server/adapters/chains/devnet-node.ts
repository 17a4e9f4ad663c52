/**
 * The devnet's node for the hot wallet: it checks the hot wallet's signature and mines a sent transfer in the next
 * block, logs every broadcast (`devnet_broadcasts`), and can be told to fail the next one to an address
 * (`devnet_failures`). Fees are a fixed table (the devnet has no fee market), nothing ever gets stuck (no
 * replacement by fee), and no deposit address is swept (the devnet keeps no balances: see `collection`).
 */
import type pg from 'pg';
import { findCoin, NETWORK_INFO, type CoinMeta, type Network } from '../../../lib/currencies.ts';
import { insertDevnetTransfer } from './devnet-clock.ts';
import { devnetTxHash, type DevnetSigner } from './devnet-signer.ts';
import { BroadcastRejectedError, ChainUnsupportedError, type ChainAdapter, type ChainAddressing, type DevnetControls, type DevnetFailureMode, type DevnetProblem, type FeeEstimate } from './port.ts';
import { unitsOf } from '../../../lib/money.ts';

/** A refusal of the faucet or the failure switch: the caller's mistake (DevnetControls.refusalOf). */
export class DevnetError extends Error {
  readonly problem: DevnetProblem;
  constructor(problem: DevnetProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

/** The coin of `currency` and `address` trimmed, or DevnetError: what the faucet and `failNext` are given. */
export function devnetTarget(addresses: ChainAddressing, currency: string, address: string): { coin: CoinMeta; address: string } {
  const coin = findCoin(currency);
  if (!coin) throw new DevnetError('UNKNOWN_CURRENCY', `unknown currency ${currency}`);
  const trimmed = address.trim();
  if (!addresses.isValid(coin.network, trimmed)) throw new DevnetError('BAD_ADDRESS', `${trimmed} is not a valid ${coin.blockchain} address`);
  return { coin, address: trimmed };
}

/**
 * What a transfer costs on each devnet network, in atomic units of its own coin: about a typical mainnet fee
 * (BTC 1,000 sat; ETH 21,000 gas, a token 65,000, at 2 gwei; a TRC-20 transfer burns its energy in TRX).
 */
const DEVNET_FEES: Record<Network, { coin: bigint; token: bigint; rate?: bigint }> = {
  BITCOIN: { coin: 1_000n, token: 1_000n, rate: 5n },
  LITECOIN: { coin: 10_000n, token: 10_000n, rate: 10n },
  DOGECOIN: { coin: 100_000_000n, token: 100_000_000n },
  ETHEREUM: { coin: 42_000_000_000_000n, token: 130_000_000_000_000n, rate: 2_000_000_000n },
  TRON: { coin: 100_000n, token: 13_000_000n },
  TON: { coin: 5_000_000n, token: 50_000_000n },
};

/** The currency `network` pays its fees in (its own coin), and whether `currency` is a token on it. */
function feeCurrency(network: Network, currency: string): { coin: string; token: boolean } {
  const coin = NETWORK_INFO[network].coin;
  return { coin, token: currency !== coin };
}

export type DevnetNode = Pick<ChainAdapter, 'hotWalletAddress' | 'signWithdrawal' | 'broadcast' | 'estimateFee' | 'replaceByFee' | 'collection'> &
  Pick<DevnetControls, 'failNext' | 'broadcasts'>;

/** `hotWallet` throws when the devnet was made without the custody seed; `init` creates the chains if need be. */
export function createDevnetNode(pool: pg.Pool, context: { hotWallet: () => DevnetSigner; addresses: ChainAddressing; init: () => Promise<void> }): DevnetNode {
  const { hotWallet } = context;

  const estimateFee = async ({ network, currency }: { network: Network; currency: string }): Promise<FeeEstimate> => {
    const { coin, token } = feeCurrency(network, currency);
    const fees = DEVNET_FEES[network];
    return { network, currency: coin, amount: unitsOf(token ? fees.token : fees.coin), rate: fees.rate };
  };

  /**
   * Checks the hot wallet's signature, then mines the transfer in the next block. The same raw transaction again is
   * a no-op (one row per hash and output), as a real node answers 'already known'.
   */
  const broadcast: DevnetNode['broadcast'] = async (network, rawTx) => {
    const payload = await hotWallet().verify(network, rawTx);
    const txHash = devnetTxHash(network, rawTx);
    const log = (outcome: string) => pool.query('INSERT INTO devnet_broadcasts (network, tx_hash, outcome) VALUES ($1, $2, $3)', [network, txHash, outcome]);
    if (!payload) {
      await log('REJECTED');
      throw new BroadcastRejectedError('the devnet refused the transaction: it is not signed by the hot wallet');
    }
    const known = await pool.query('SELECT 1 FROM devnet_transactions WHERE network = $1 AND tx_hash = $2', [network, txHash]);
    if (known.rowCount) {
      await log('DUPLICATE');
      return { txHash };
    }
    const failure = await pool.query<{ mode: DevnetFailureMode }>('DELETE FROM devnet_failures WHERE network = $1 AND address = $2 RETURNING mode', [network, payload.to]);
    const mode = failure.rows[0]?.mode;
    if (mode === 'REJECT') {
      await log('REJECTED');
      throw new BroadcastRejectedError('the devnet was told to refuse this transaction');
    }
    if (mode === 'DROP') {
      await log('DROPPED');
      return { txHash };
    }
    await context.init();
    await insertDevnetTransfer(pool, { network, txHash, currency: payload.currency, from: payload.from, to: payload.to, amount: payload.amount });
    await log('ACCEPTED');
    return { txHash };
  };

  return {
    hotWalletAddress: (network) => hotWallet().address(network),
    signWithdrawal: (order) => hotWallet().sign(order),
    broadcast,
    estimateFee,
    async replaceByFee() {
      throw new ChainUnsupportedError('the devnet mines every accepted transaction in the next block: there is nothing to replace');
    },
    // Deposits stay where they arrived and the hot wallet sends from a balance the devnet does not track: no sweeps.
    collection: {
      sweeps: () => false,
      sweep: async (source) => ({ state: 'NOT_NEEDED', reason: `the devnet keeps no balances: ${source.address} needs no sweep` }),
      async topUpGas(target) {
        const signed = await hotWallet().sign({ reference: target.reference, network: target.network, currency: NETWORK_INFO[target.network].coin, toAddress: target.address, amount: target.amount });
        await broadcast(target.network, signed.rawTx);
        return signed;
      },
    },

    async failNext({ currency, address, mode }) {
      const { coin, address: trimmed } = devnetTarget(context.addresses, currency, address);
      await pool.query(
        `INSERT INTO devnet_failures (network, address, mode) VALUES ($1, $2, $3)
         ON CONFLICT (network, address) DO UPDATE SET mode = excluded.mode, created_at = now()`,
        [coin.network, trimmed, mode],
      );
      return { network: coin.network, address: trimmed, mode };
    },

    async broadcasts(txHash) {
      const result = await pool.query<{ outcome: string; created_at: Date }>('SELECT outcome, created_at FROM devnet_broadcasts WHERE tx_hash = $1 ORDER BY seq', [txHash]);
      return result.rows.map((r) => ({ outcome: r.outcome, at: r.created_at }));
    },
  };
}
