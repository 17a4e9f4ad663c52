/**
 * The gateway's and the worker's side of the signer: the chain port with everything that needs a private key
 * (signing a withdrawal, a batch, a replacement by fee, a sweep, a gas top-up, a cold sweep, a consolidation) forwarded to the signer by the
 * order's id, and the rest (reading, broadcasting, fees) left to the adapters, which run on public keys here.
 */
import type pg from 'pg';
import type { ChainEnv } from '../../lib/currencies.ts';
import type { WalletKeys } from '../adapters/keys/port.ts';
import { ChainUnsupportedError, FeeBumpBlockedError, HotWalletShortError, type ChainAdapter, type SignedWithdrawal, type SweepOutcome } from '../adapters/chains/port.ts';
import { SignerCallError, signerClient, type SignerChannel, type SignerRequest } from '../adapters/signer/channel.ts';
import { publicKeyMac, publicKeysFromDatabase } from './keys.ts';

export type Signer = { call: (request: SignerRequest) => Promise<unknown> };

export function connectSigner(channel: SignerChannel, options?: { timeoutMs?: number }): Signer {
  const client = signerClient(channel, options);
  return {
    async call(request) {
      try {
        return await client.call(request);
      } catch (error) {
        // The errors the worker acts on keep their class; a refusal stays a SignerCallError naming its code.
        if (!(error instanceof SignerCallError)) throw error;
        if (error.remoteName === 'FeeBumpBlockedError') throw new FeeBumpBlockedError(error.message, { cause: error });
        if (error.remoteName === 'ChainUnsupportedError') throw new ChainUnsupportedError(error.message, { cause: error });
        // The withdrawal then waits for the hot wallet to be refilled (withdrawals/worker.ts).
        if (error.remoteName === 'HotWalletShortError') throw new HotWalletShortError(error.message, { cause: error });
        throw error;
      }
    },
  };
}

/**
 * The custody's public keys for this process, verified with `token` (SIGNER_TOKEN), TON's pool topped up by the
 * signer when one is missing or does not verify.
 */
export function remoteKeys(pool: pg.Pool, env: ChainEnv, signer: Signer, token: string): Promise<WalletKeys> {
  return publicKeysFromDatabase(pool, env, publicKeyMac(token), async (through) => void (await signer.call({ op: 'public-keys', network: 'TON', through })));
}

/** `chain` with its signing forwarded to the signer by id; the signer reads the order itself and may refuse. */
export function remoteSigning(chain: ChainAdapter, signer: Signer): ChainAdapter {
  const signed = async (request: SignerRequest) => (await signer.call(request)) as SignedWithdrawal;
  return {
    ...chain,
    signsSealedOnly: true,
    async signWithdrawal(order) {
      // A cold sweep (`cold:<id>`, custody_movements) is signed by its id as a withdrawal is; the signer reads it itself.
      const cold = /^cold:([0-9a-f-]{36})$/i.exec(order.reference)?.[1];
      if (cold) {
        try {
          return await signed({ op: 'cold-sweep', id: cold });
        } catch (error) {
          // Refused as more than the ceiling leaves to sweep: nothing was signed, the movement fails as one the hot wallet cannot pay.
          if (error instanceof SignerCallError && error.code === 'NOT_HELD') throw new HotWalletShortError(error.message, { cause: error });
          throw error;
        }
      }
      if (!/^[0-9a-f-]{36}$/i.test(order.reference)) throw new ChainUnsupportedError(`${order.reference} is not an order the signer knows`);
      return signed({ op: 'withdrawal', id: order.reference });
    },
    signBatch: chain.signBatch && ((batch) => signed({ op: 'batch', id: batch.reference })),
    replaceByFee: (stuck) => signed({ op: 'replace', id: stuck.order.reference }),
    consolidate:
      chain.consolidate &&
      (async (order) => ((await signer.call({ op: 'consolidation', reference: order.reference, network: order.network })) ?? undefined) as Awaited<ReturnType<NonNullable<ChainAdapter['consolidate']>>>),
    collection: {
      ...chain.collection,
      sweep: async (source) => (await signer.call({ op: 'sweep', reference: source.reference })) as SweepOutcome,
      topUpGas: (target) => signed({ op: 'top-up', reference: target.reference, amount: target.amount.toString() }),
    },
  };
}
