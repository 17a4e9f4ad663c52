/**
 * The signer (issue 31): the only process that loads the wallet seed; it signs withdrawals, batches, replacements,
 * deposit sweeps, gas top-ups, cold sweeps (HOT_WALLET_MAX → COLD_WALLET) and consolidations. It records the public keys everyone else
 * derives addresses from (keys.ts), runs the chain adapters with every key, and listens on the local channel
 * (adapters/signer/channel.ts). Each request names an order by its id; the order is read from the database and
 * checked by the domain's rules (domain/signing.ts: held, approved, not changed since), and only then built and
 * signed by the network's adapter, which signs deterministically per reference and keeps what it signed, so the
 * same order gives the same bytes across restarts. A refusal is logged with its reason and answered.
 */
import type pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { openWalletSeed } from '../adapters/keys/sealed-seed.ts';
import { seedKeys } from '../adapters/keys/wallet-keys.ts';
import { openChains } from '../adapters/chains/open.ts';
import { listenSigner, signerChannel, type SignerChannel, type SignerRequest } from '../adapters/signer/channel.ts';
import { chainAddressing } from '../domain/addresses.ts';
import { NETWORK_INFO, type Network } from '../../lib/currencies.ts';
import { unitsOf } from '../../lib/money.ts';
import { approvalSealer, batchToSign, coldSweepToSign, consolidationToSign, SigningRefusal, sweepToSign, topUpToSign, withdrawalToReplace, withdrawalToSign, type HotColdRules } from '../domain/signing.ts';
import { dailyCap, type CappedPayment } from '../domain/signing-cap.ts';
import type { WithdrawalOrder } from '../adapters/chains/port.ts';
import { checkChainEnv, checkSeedFingerprint } from '../custody.ts';
import { publicKeyMac, recordXpubs, topUpTonKeys } from './keys.ts';

export type SignerConfig = Pick<Config, 'production' | 'publicUrl' | 'dataDir' | 'walletSeed' | 'chains' | 'signer'> &
  Partial<Pick<Config, 'walletSeedFile' | 'walletSeedPassphraseFd' | 'walletSeedCommand' | 'databaseUrl' | 'hotCold'>>;

export type RunningSigner = { channel: SignerChannel; close: () => Promise<void> };

export async function startSigner(config: SignerConfig, log: Logger, pool: pg.Pool): Promise<RunningSigner> {
  const seed = await openWalletSeed(
    { mnemonic: config.walletSeed, file: config.walletSeedFile, passphraseFd: config.walletSeedPassphraseFd, command: config.walletSeedCommand, dataDir: config.dataDir, production: config.production },
    log,
  );
  await checkSeedFingerprint(pool, seed);
  await checkChainEnv(pool, config.chains.env);
  const keys = seedKeys(seed.bytes, seed.fingerprint);
  const channel = await signerChannel({ socket: config.signer.socket, token: config.signer.token, dataDir: config.dataDir, production: config.production, database: config.databaseUrl });
  // What everyone else derives addresses from, authenticated with a key from the channel's token (keys.ts).
  const mac = publicKeyMac(channel.token);
  await recordXpubs(pool, seed, config.chains.env, mac);
  await topUpTonKeys(pool, keys, mac, { repairAll: true, log });
  const addresses = chainAddressing(config.chains.env);
  const chain = openChains(pool, { ...config.chains, publicUrl: config.publicUrl, keys, addresses }).port;
  const seal = approvalSealer(channel.token);
  // Cold sweeps and consolidations are checked against the signer's own settings, not the worker's.
  const hotCold: HotColdRules = { env: config.chains.env, ceiling: config.hotCold?.max ?? {}, cold: config.hotCold?.cold ?? {}, consolidateBelow: config.chains.utxo.consolidateBelow ?? {} };
  const held = async (network: keyof typeof NETWORK_INFO) => (await chain.holdings(network))[NETWORK_INFO[network].coin] ?? 0n;
  const signedBefore = async (network: keyof typeof NETWORK_INFO, reference: string) => (await chain.signedBefore?.(network, reference)) ?? false;

  // The seal's key is the gateway's too: what the signer signs out in a day is capped whatever the seals say.
  const cap = dailyCap(pool, config.signer.dailyMax ?? {});
  const capped = (orders: readonly WithdrawalOrder[]) =>
    cap.reserve(orders.map((o): CappedPayment => ({ reference: o.reference, network: o.network, currency: o.currency, amount: o.amount })));

  // What moving a sweep's currency costs now, by the adapter's estimate: a top-up pays at most a margin over it.
  const sweepFee = async (sweep: { network: Network; currency: string; address: string }) =>
    (await chain.estimateFee({ network: sweep.network, currency: sweep.currency, toAddress: sweep.address, amount: unitsOf(1n) })).amount;

  // One signing per order at a time: a second ask for the same one waits for the first and gets its bytes.
  const busy = new Map<string, Promise<unknown>>();
  const once = (key: string, work: () => Promise<unknown>): Promise<unknown> => {
    const previous = busy.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    busy.set(key, next);
    void next.finally(() => {
      if (busy.get(key) === next) busy.delete(key);
    }).catch(() => undefined);
    return next;
  };

  const handle = async (request: SignerRequest): Promise<unknown> => {
    switch (request.op) {
      case 'hello':
        return { fingerprint: seed.fingerprint };
      case 'public-keys':
        if (request.network !== 'TON' || !Number.isInteger(request.through)) throw new SigningRefusal('BAD_REQUEST', 'public keys are asked for TON up to an index');
        return { added: await topUpTonKeys(pool, keys, mac, { through: request.through, log }) };
      case 'withdrawal':
        return once(`withdrawal:${request.id}`, async () => {
          const order = await withdrawalToSign(pool, request.id, seal);
          await capped([order]);
          return chain.signWithdrawal(order);
        });
      case 'batch':
        return once(`batch:${request.id}`, async () => {
          const batch = await batchToSign(pool, request.id, seal);
          if (!chain.signBatch) throw new SigningRefusal('NOT_APPROVED', `${batch.network} does not pay withdrawals in batches`);
          await capped(batch.orders);
          return chain.signBatch({ reference: request.id, network: batch.network, orders: batch.orders });
        });
      case 'replace':
        return once(`withdrawal:${request.id}`, async () => {
          const stuck = await withdrawalToReplace(pool, request.id, seal);
          const fee = await chain.estimateFee(stuck.order);
          return chain.replaceByFee({ order: stuck.order, signed: { rawTx: stuck.rawTx, txHash: stuck.txHash, fromAddress: '' }, fee, payments: stuck.payments }, fee);
        });
      case 'sweep':
        return once(request.reference, async () => chain.collection.sweep(await sweepToSign(pool, request.reference, keys, addresses)));
      case 'top-up':
        return once(request.reference, async () => chain.collection.topUpGas(await topUpToSign(pool, request.reference, request.amount, keys, addresses, sweepFee)));
      case 'cold-sweep':
        return once(`cold:${request.id}`, async () => chain.signWithdrawal(await coldSweepToSign(pool, request.id, hotCold, held, signedBefore)));
      case 'consolidation':
        return once(request.reference, async () => {
          const order = await consolidationToSign(pool, request.reference, request.network, hotCold);
          if (!chain.consolidate) throw new SigningRefusal('NOT_APPROVED', `${order.network} has no deposit outputs to consolidate`);
          // Nothing due (fees above the rate, no deposit output): null, as the adapter's undefined does not travel.
          return (await chain.consolidate(order)) ?? null;
        });
      default:
        throw new SigningRefusal('BAD_REQUEST', `unknown request ${JSON.stringify((request as { op?: unknown }).op)}`);
    }
  };

  const listener = await listenSigner(
    channel,
    async (request) => {
      try {
        return await handle(request);
      } catch (error) {
        if (error instanceof SigningRefusal) log.warn({ request, code: error.code, reason: error.message }, 'signer refused');
        else log.warn({ err: error, request }, 'signing failed');
        throw error;
      }
    },
    log,
  );
  const caps = cap.describe();
  const uncapped = Object.keys(config.signer.dailyMax ?? {}).length === 0;
  log.info({ socket: channel.path, fingerprint: seed.fingerprint, dailyCap: caps }, uncapped && config.production ? 'signer listening; no daily cap: SIGNER_DAILY_MAX is unset, so a compromised gateway can have every withdrawal it seals signed' : 'signer listening');
  return { channel, close: listener.close };
}

/**
 * SIGNER=embedded (outside production): the signer in this command, unless one already answers on the channel (the
 * server's, for a worker beside it). The code paths that use it still go through the channel with no seed.
 */
export async function embeddedSigner(config: SignerConfig, log: Logger, pool: pg.Pool): Promise<RunningSigner | undefined> {
  if (config.signer.mode !== 'embedded') return undefined;
  if (config.production) throw new Error('the signer runs apart in production (npm run signer)');
  try {
    return await startSigner(config, log, pool);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('a signer already listens')) return undefined;
    throw error;
  }
}
