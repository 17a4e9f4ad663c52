/**
 * Devnet: a simulated chain per network kept in PostgreSQL, so every process (server, worker, CLI) sees the same
 * chains and deposits survive restarts. Blocks come on a clock: height = (now - genesis) / block time, read from
 * the database's clock; a transfer is mined in the block after the one current when it was sent.
 */
import type pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mnemonicToSeedSync } from '@scure/bip39';
import { AmountError, formatUnits, parseAmount } from '../../../lib/amount.ts';
import { findCoin, NETWORKS, type Network } from '../../../lib/currencies.ts';
import { deriveAddress, isValidAddress } from '../../domain/addresses.ts';
import { BroadcastRejectedError, transferKey, type ChainTransfer, type TransferRef, type TransferStatus, type WithdrawalChainPort } from './port.ts';
import { createDevnetSigner, devnetTxHash, type DevnetSigner } from './devnet-signer.ts';

/** Confirmations a deposit waits for on each devnet network unless DEVNET_CONFIRMATIONS says otherwise. */
export const DEVNET_DEFAULT_CONFIRMATIONS: Record<Network, number> = { BITCOIN: 2, LITECOIN: 4, DOGECOIN: 6, ETHEREUM: 12, TRON: 19, TON: 1 };

/** Transfers younger than this are scanned again: one committed late under an earlier sequence number is not missed. */
const RESCAN_WINDOW = "interval '5 seconds'";
const HEIGHT = `floor(extract(epoch from (clock_timestamp() - c.genesis_at)) * 1000 / c.block_ms)::bigint`;
// A fixed, public devnet-only mnemonic (a BIP39 test vector): the sender of faucet deposits, never a user's key.
const FAUCET_MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

/** `seed` (the custody's HD seed) gives the hot wallet its keys; without it the devnet only takes deposits. */
export type DevnetOptions = { blockMs: number; confirmations?: Partial<Record<Network, number>>; publicUrl: string; seed?: Uint8Array };

/** How the devnet fails the next broadcast to an address: REJECT refuses it, DROP accepts it and never mines it. */
export type DevnetFailureMode = 'REJECT' | 'DROP';

export type DevnetReceipt = {
  network: Network;
  currency: string;
  txHash: string;
  outputIndex: number;
  fromAddress: string;
  toAddress: string;
  amount: string;
  blockHeight: number;
  explorerUrl: string;
};

export type DevnetTransaction = DevnetReceipt & { height: number; confirmations: number; requiredConfirmations: number; createdAt: Date };

export type DevnetProblem = 'UNKNOWN_CURRENCY' | 'BAD_ADDRESS' | 'BAD_AMOUNT';

export class DevnetError extends Error {
  readonly problem: DevnetProblem;
  constructor(problem: DevnetProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

export type DevnetChain = WithdrawalChainPort & {
  /** Tells the devnet to fail the next broadcast to `address` (for tests and demos of a failed withdrawal). */
  failNext(input: { currency: string; address: string; mode: DevnetFailureMode }): Promise<{ network: Network; address: string; mode: DevnetFailureMode }>;
  /** Every broadcast of a transaction hash the devnet received, oldest first. */
  broadcasts(txHash: string): Promise<{ outcome: string; at: Date }[]>;
  /** Creates the chains; `rebase` moves genesis so a changed block time keeps heights continuous. */
  init(options?: { rebase?: boolean }): Promise<void>;
  /** Sends a deposit from the devnet faucet to any valid address; amount as the user writes it. */
  send(input: { currency: string; toAddress: string; amount: string }): Promise<DevnetReceipt>;
  heights(): Promise<Record<string, number>>;
  findTransaction(txHash: string): Promise<DevnetTransaction | undefined>;
};

type TransferRow = {
  seq: string;
  network: Network;
  tx_hash: string;
  output_index: number;
  currency: string;
  from_address: string;
  to_address: string;
  amount: string;
  block_height: string;
  height: string;
  settled: boolean;
  created_at: Date;
};

export function createDevnet(pool: pg.Pool, options: DevnetOptions): DevnetChain {
  const confirmations = { ...DEVNET_DEFAULT_CONFIRMATIONS, ...options.confirmations };
  const explorer = `${options.publicUrl}/sandbox/devnet/tx/{tx}`;
  const faucet = new Map<Network, Promise<string>>();
  const faucetAddress = (network: Network) => {
    let address = faucet.get(network);
    if (!address) {
      address = deriveAddress(mnemonicToSeedSync(FAUCET_MNEMONIC), network, 0);
      faucet.set(network, address);
    }
    return address;
  };

  const signer: DevnetSigner | undefined = options.seed ? createDevnetSigner(options.seed) : undefined;
  const hotWallet = () => {
    if (!signer) throw new Error('this devnet has no hot wallet: it was created without the custody seed');
    return signer;
  };

  const chain: DevnetChain = {
    networks: NETWORKS,

    hotWalletAddress: (network) => hotWallet().address(network),

    signWithdrawal: (order) => hotWallet().sign(order),

    /**
     * The devnet's node: checks the hot wallet's signature, then mines the transfer in the next block. The same raw
     * transaction again is a no-op (one row per hash and output), as a real node answers 'already known'.
     */
    async broadcast(network, rawTx) {
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
      await chain.init();
      await pool.query(
        `INSERT INTO devnet_transactions (network, tx_hash, output_index, currency, from_address, to_address, amount, block_height)
         SELECT c.network, $2, 0, $3, $4, $5, $6, ${HEIGHT} + 1 FROM devnet_chains c WHERE c.network = $1
         ON CONFLICT (network, tx_hash, output_index) DO NOTHING`,
        [network, txHash, payload.currency, payload.from, payload.to, payload.amount],
      );
      await log('ACCEPTED');
      return { txHash };
    },

    async failNext({ currency, address, mode }) {
      const coin = findCoin(currency);
      if (!coin) throw new DevnetError('UNKNOWN_CURRENCY', `unknown currency ${currency}`);
      const trimmed = address.trim();
      if (!isValidAddress(coin.network, trimmed)) throw new DevnetError('BAD_ADDRESS', `${trimmed} is not a valid ${coin.blockchain} address`);
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
    requiredConfirmations: (network) => confirmations[network],
    explorerUrl: () => explorer,

    async init({ rebase = false } = {}) {
      await pool.query(
        `INSERT INTO devnet_chains (network, genesis_at, block_ms) SELECT unnest($1::text[]), clock_timestamp(), $2
         ON CONFLICT (network) DO NOTHING`,
        [NETWORKS, options.blockMs],
      );
      if (rebase) {
        await pool.query(
          `UPDATE devnet_chains c
              SET genesis_at = clock_timestamp() - (${HEIGHT} * $1::bigint) * interval '1 millisecond', block_ms = $1
            WHERE c.block_ms <> $1`,
          [options.blockMs],
        );
      }
    },

    async send({ currency, toAddress, amount }) {
      const coin = findCoin(currency);
      if (!coin) throw new DevnetError('UNKNOWN_CURRENCY', `unknown currency ${currency}`);
      const address = toAddress.trim();
      if (!isValidAddress(coin.network, address)) throw new DevnetError('BAD_ADDRESS', `${address} is not a valid ${coin.blockchain} address`);
      let units: bigint;
      try {
        units = parseAmount(amount, coin.decimals);
      } catch (error) {
        throw new DevnetError('BAD_AMOUNT', error instanceof AmountError ? error.message : 'bad amount');
      }
      if (units <= 0n) throw new DevnetError('BAD_AMOUNT', 'the amount must be above zero');
      const txHash = (coin.network === 'ETHEREUM' ? '0x' : '') + randomBytes(32).toString('hex');
      const from = await faucetAddress(coin.network);
      await chain.init();
      const result = await pool.query<{ block_height: string }>(
        `INSERT INTO devnet_transactions (network, tx_hash, output_index, currency, from_address, to_address, amount, block_height)
         SELECT c.network, $2, 0, $3, $4, $5, $6, ${HEIGHT} + 1 FROM devnet_chains c WHERE c.network = $1
         RETURNING block_height`,
        [coin.network, txHash, currency, from, address, units.toString()],
      );
      const row = result.rows[0];
      if (!row) throw new Error(`devnet ${coin.network} is not initialised`);
      return {
        network: coin.network,
        currency,
        txHash,
        outputIndex: 0,
        fromAddress: from,
        toAddress: address,
        amount: formatUnits(units, coin.decimals),
        blockHeight: Number(row.block_height),
        explorerUrl: explorer.replace('{tx}', txHash),
      };
    },

    async heights() {
      const result = await pool.query<{ network: string; height: string }>(`SELECT c.network, ${HEIGHT} AS height FROM devnet_chains c`);
      return Object.fromEntries(result.rows.map((r) => [r.network, Number(r.height)]));
    },

    async scan(network, cursor, limit) {
      const result = await pool.query<TransferRow>(
        `SELECT t.seq, t.network, t.tx_hash, t.output_index, t.currency, t.from_address, t.to_address, t.amount, t.block_height,
                ${HEIGHT} AS height, t.created_at < clock_timestamp() - ${RESCAN_WINDOW} AS settled, t.created_at
           FROM devnet_transactions t JOIN devnet_chains c ON c.network = t.network
          WHERE t.network = $1 AND t.seq > $2
          ORDER BY t.seq LIMIT $3`,
        [network, cursor ?? '0', limit],
      );
      let next = cursor;
      let contiguous = true;
      const transfers: ChainTransfer[] = result.rows.map((row) => {
        contiguous &&= row.settled;
        if (contiguous) next = row.seq;
        const mined = Number(row.block_height) <= Number(row.height);
        return {
          network: row.network,
          txHash: row.tx_hash,
          outputIndex: row.output_index,
          currency: row.currency,
          fromAddress: row.from_address,
          toAddress: row.to_address,
          amount: BigInt(row.amount),
          blockHeight: mined ? Number(row.block_height) : null,
        };
      });
      return { transfers, cursor: next };
    },

    async status(network, refs: readonly TransferRef[]) {
      const statuses = new Map<string, TransferStatus>();
      if (refs.length === 0) return statuses;
      const result = await pool.query<{ tx_hash: string; output_index: number; block_height: string; height: string }>(
        `SELECT t.tx_hash, t.output_index, t.block_height, ${HEIGHT} AS height
           FROM devnet_transactions t JOIN devnet_chains c ON c.network = t.network
           JOIN unnest($2::text[], $3::int[]) AS r(tx_hash, output_index) ON r.tx_hash = t.tx_hash AND r.output_index = t.output_index
          WHERE t.network = $1`,
        [network, refs.map((r) => r.txHash), refs.map((r) => r.outputIndex)],
      );
      for (const ref of refs) statuses.set(transferKey(ref), { state: 'DROPPED' });
      for (const row of result.rows) {
        const depth = Number(row.height) - Number(row.block_height) + 1;
        statuses.set(transferKey({ txHash: row.tx_hash, outputIndex: row.output_index }), {
          state: 'SEEN',
          blockHeight: depth > 0 ? Number(row.block_height) : null,
          confirmations: Math.max(0, depth),
        });
      }
      return statuses;
    },

    async findTransaction(txHash) {
      const result = await pool.query<TransferRow>(
        `SELECT t.seq, t.network, t.tx_hash, t.output_index, t.currency, t.from_address, t.to_address, t.amount, t.block_height,
                ${HEIGHT} AS height, true AS settled, t.created_at
           FROM devnet_transactions t JOIN devnet_chains c ON c.network = t.network
          WHERE t.tx_hash = $1 ORDER BY t.output_index LIMIT 1`,
        [txHash],
      );
      const row = result.rows[0];
      const coin = row && findCoin(row.currency);
      if (!row || !coin) return undefined;
      const depth = Number(row.height) - Number(row.block_height) + 1;
      return {
        network: row.network,
        currency: row.currency,
        txHash: row.tx_hash,
        outputIndex: row.output_index,
        fromAddress: row.from_address,
        toAddress: row.to_address,
        amount: formatUnits(BigInt(row.amount), coin.decimals),
        blockHeight: Number(row.block_height),
        explorerUrl: explorer.replace('{tx}', row.tx_hash),
        height: Number(row.height),
        confirmations: Math.max(0, depth),
        requiredConfirmations: confirmations[row.network],
        createdAt: row.created_at,
      };
    },
  };
  return chain;
}
