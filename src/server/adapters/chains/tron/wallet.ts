/**
 * The custody's side of TRON: the hot wallet's withdrawals, sweeps of deposit addresses into it (a TRC-20 sweep is
 * paid in TRX by the deposit address, so the hot wallet tops it up first), fee estimates and what the chain holds.
 * Every transaction is built here on the node's latest block, signed here, kept by reference before it is sent
 * (store.ts), and sent as it was kept.
 */
import type pg from 'pg';
import { BroadcastRejectedError, ChainUnsupportedError, type AddressHolding, type ChainAdapter, type FeeEstimate, type SignedWithdrawal, type SweepOutcome, type SweepSource } from '../port.ts';
import type { TronApi, TronRawData, TronTransaction } from './api.ts';
import { referenceOf, signTransaction, toHexAddress, trc20Transfer, trc20TransferParameter, trxTransfer, word, type Tapos } from './codec.ts';
import type { TronKey, TronKeys } from './keys.ts';
import type { KeptTransaction, TronStore } from './store.ts';
import { HOT_WALLET_INDEX } from '../devnet-signer.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** How long after its reference block a transaction may still be included (the node allows up to 24 hours). */
export const EXPIRATION_MS = 60 * 60 * 1000;
/** Bandwidth (bytes) a signed TRX transfer and a TRC-20 transfer take, signature and result included. */
const TRX_TX_BYTES = 270n;
const TRC20_TX_BYTES = 350n;
/** Energy a TRC-20 transfer is assumed to burn when the node cannot estimate it (USDT to a new holder: ~130,000). */
const FALLBACK_ENERGY = 130_000n;
/** A sweep's top-up covers the estimated energy with this margin (percent); fee_limit allows a wider one. */
const GAS_MARGIN = 120n;
const FEE_LIMIT_MARGIN = 150n;
/** Chain parameters the node may not list (a stand-in, a private chain): mainnet's values, in sun. */
const DEFAULT_PARAMETERS: Record<string, number> = { getTransactionFee: 1000, getEnergyFee: 100, getCreateAccountFee: 100_000, getCreateNewAccountFeeInSystemContract: 1_000_000 };

/** java-tron's broadcast codes that are passing trouble (try again later); any other refusal is for good. */
const PASSING = new Set(['SERVER_BUSY', 'NO_CONNECTION', 'NOT_ENOUGH_EFFECTIVE_CONNECTION', 'BLOCK_UNSOLIDIFIED', 'OTHER_ERROR']);

/** `contracts`: currency → its TRC-20 contract (T…). */
type Context = { api: TronApi; store: TronStore; keys: TronKeys; contracts: ReadonlyMap<string, string>; expirationMs?: number | undefined };

export type TronWallet = Pick<ChainAdapter, 'hotWalletAddress' | 'signWithdrawal' | 'broadcast' | 'estimateFee' | 'replaceByFee' | 'holdings' | 'addressHoldings' | 'collection'>;

export function createTronWallet(pool: pg.Pool, context: Context): TronWallet {
  const { api, store, keys } = context;
  const { contracts } = context;
  const contractOf = (currency: string): string | undefined => {
    if (currency === 'TRX') return undefined;
    const contract = contracts.get(currency);
    if (!contract) throw new Error(`${currency} has no TRC-20 contract in TRON_TOKENS`);
    return contract;
  };

  const parameter = async (name: keyof typeof DEFAULT_PARAMETERS): Promise<bigint> => BigInt((await api.chainParameters())[name] ?? DEFAULT_PARAMETERS[name] ?? 0);

  const tokenBalance = async (contract: string, holder: string): Promise<Units> => {
    const answer = await api.constantCall({ owner: toHexAddress(holder), contract: toHexAddress(contract), selector: 'balanceOf(address)', parameter: toHexAddress(holder).slice(2).padStart(64, '0') });
    if (answer.result?.result !== true) throw new Error(`balanceOf on ${contract} failed: ${answer.result?.message ?? 'no result'}`);
    return unitsOf(word(answer.constant_result?.[0]));
  };

  /** Energy a transfer(to, amount) from `from` would use, as the node runs it without sending it. */
  const transferEnergy = async (contract: string, from: string, to: string, amount: Units): Promise<bigint> => {
    const answer = await api.constantCall({ owner: toHexAddress(from), contract: toHexAddress(contract), selector: 'transfer(address,uint256)', parameter: trc20TransferParameter(to, amount) });
    return answer.result?.result === true && answer.energy_used ? BigInt(answer.energy_used) : FALLBACK_ENERGY;
  };

  /** Bandwidth the address has for free today (daily allowance and staked), in bytes. */
  const freeBandwidth = async (address: string): Promise<bigint> => {
    const r = await api.accountResource(toHexAddress(address));
    return BigInt(Math.max(0, (r.freeNetLimit ?? 0) - (r.freeNetUsed ?? 0)) + Math.max(0, (r.NetLimit ?? 0) - (r.NetUsed ?? 0)));
  };
  const stakedEnergy = async (address: string): Promise<bigint> => {
    const r = await api.accountResource(toHexAddress(address));
    return BigInt(Math.max(0, (r.EnergyLimit ?? 0) - (r.EnergyUsed ?? 0)));
  };
  const trxBalance = async (address: string): Promise<{ exists: boolean; balance: Units<'TRX'> }> => {
    const account = await api.account(toHexAddress(address));
    return { exists: account.address !== undefined, balance: unitsOf(BigInt(account.balance ?? 0)) };
  };

  /** Sends a kept transaction; the node already having it is success (broadcast is idempotent). */
  const send = async (rawTx: string): Promise<{ txHash: string }> => {
    const transaction = JSON.parse(rawTx) as TronTransaction;
    const answer = await api.broadcast(transaction);
    if (answer.result === true || answer.code === 'DUP_TRANSACTION_ERROR') return { txHash: transaction.txID };
    const message = `${answer.code ?? 'refused'}: ${decodeMessage(answer.message)}`;
    if (answer.code === undefined || PASSING.has(answer.code)) throw new Error(`the TRON node did not take the transaction (${message})`);
    throw new BroadcastRejectedError(`the TRON network refused the transaction (${message})`);
  };

  /**
   * Sends a kept transaction unless a block has it already (the node would refuse one past its expiration as
   * expired before it looked whether it has it).
   */
  const sendKept = async (kept: KeptTransaction): Promise<void> => {
    if ((await api.transactionInfo(kept.txHash)).blockNumber === undefined) await send(kept.rawTx);
  };

  /** Whether a kept transaction can never be included any more: expired by the chain's clock and not in any block. */
  const expiredAndAbsent = async (kept: KeptTransaction): Promise<boolean> => {
    const head = (await api.nowBlock()).block_header.raw_data;
    if (head.timestamp <= kept.expiresAt) return false;
    if ((await api.transactionInfo(kept.txHash)).blockNumber !== undefined) return false;
    return (await api.transactionById(kept.txHash)) === undefined;
  };

  /**
   * The transaction kept for `reference`, or a new one built on the node's latest block, signed by `key` and kept
   * before anything is sent. A kept one is replaced only when it can never be included any more.
   */
  const signOnce = async (reference: string, key: TronKey, fee: Units, build: (tapos: Tapos) => TronRawData): Promise<KeptTransaction> => {
    const kept = await store.byReference(reference);
    if (kept && !(await expiredAndAbsent(kept))) return kept;
    const head = await api.nowBlock();
    const expiration = head.block_header.raw_data.timestamp + (context.expirationMs ?? EXPIRATION_MS);
    // The timestamp only tells apart two equal transfers signed on the same block; on a clash it moves by 1 ms.
    for (let timestamp = Date.now(); ; timestamp += 1) {
      const signed = await signTransaction(build({ ...referenceOf(head), expiration, timestamp }), key.privateKey);
      const next: KeptTransaction = { reference, txHash: signed.txID, rawTx: JSON.stringify(signed), fromAddress: key.address, expiresAt: expiration, fee };
      const winner = await store.keep(next, kept?.txHash);
      if (winner) return winner;
    }
  };

  const signed = (kept: KeptTransaction): SignedWithdrawal => ({ rawTx: kept.rawTx, txHash: kept.txHash, fromAddress: kept.fromAddress });

  const estimateFee: TronWallet['estimateFee'] = async ({ network, currency, toAddress, amount }) => {
    const bandwidth = await parameter('getTransactionFee');
    const contract = contractOf(currency);
    if (contract) {
      const hot = await keys.hotWallet();
      const price = await parameter('getEnergyFee');
      const energy = await transferEnergy(contract, hot.address, toAddress, amount > 0n ? amount : unitsOf(1n));
      return { network, currency: 'TRX', amount: unitsOf(energy * price + TRC20_TX_BYTES * bandwidth), rate: price };
    }
    // The hot wallet's free bandwidth is not counted on: it is soon used up by a busy wallet.
    const activation = (await trxBalance(toAddress)).exists ? 0n : (await parameter('getCreateAccountFee')) + (await parameter('getCreateNewAccountFeeInSystemContract'));
    return { network, currency: 'TRX', amount: unitsOf(TRX_TX_BYTES * bandwidth + activation), rate: bandwidth };
  };

  /** A hot-wallet transfer (a withdrawal or a gas top-up), kept by reference. */
  const signFromHotWallet = async (order: { reference: string; currency: string; toAddress: string; amount: Units }): Promise<KeptTransaction> => {
    const hot = await keys.hotWallet();
    const contract = contractOf(order.currency);
    const fee = await estimateFee({ network: 'TRON', currency: order.currency, toAddress: order.toAddress, amount: order.amount });
    if (!contract) return signOnce(order.reference, hot, fee.amount, (tapos) => trxTransfer(hot.address, order.toAddress, order.amount, tapos));
    const feeLimit = feeLimitFor(fee.amount);
    return signOnce(order.reference, hot, fee.amount, (tapos) => trc20Transfer(hot.address, contract, order.toAddress, order.amount, feeLimit, tapos));
  };

  /** What a sweep needs: the planned transaction, or gas first, or nothing to move. */
  const planSweep = async (source: SweepSource, hot: string): Promise<SweepOutcome | { state: 'READY'; fee: FeeEstimate; build: (tapos: Tapos) => TronRawData }> => {
    const contract = contractOf(source.currency);
    const bandwidthPrice = await parameter('getTransactionFee');
    const { exists, balance } = await trxBalance(source.address);
    if (!contract) {
      const bandwidth = exists && (await freeBandwidth(source.address)) >= TRX_TX_BYTES ? 0n : TRX_TX_BYTES * bandwidthPrice;
      // A TRX deposit pays its own bandwidth: what moves is the amount less what the address must burn for it.
      const value = source.amount < balance - bandwidth ? source.amount : unitsOf(balance - bandwidth);
      if (value <= 0n) return { state: 'NOT_NEEDED', reason: `${source.address} holds ${balance} sun, not enough to sweep` };
      return { state: 'READY', fee: { network: 'TRON', currency: 'TRX', amount: unitsOf(bandwidth) }, build: (tapos) => trxTransfer(source.address, hot, value, tapos) };
    }
    const held = await tokenBalance(contract, source.address);
    if (held === 0n) return { state: 'NOT_NEEDED', reason: `${source.address} holds no ${source.currency}` };
    if (held < source.amount) throw new Error(`${source.address} holds ${held} ${source.currency}, less than the ${source.amount} to sweep`);
    const price = await parameter('getEnergyFee');
    const energy = await transferEnergy(contract, source.address, hot, source.amount);
    const staked = exists ? await stakedEnergy(source.address) : 0n;
    const energyCost = (energy > staked ? energy - staked : 0n) * price;
    const bandwidth = exists && (await freeBandwidth(source.address)) >= TRC20_TX_BYTES ? 0n : TRC20_TX_BYTES * bandwidthPrice;
    const need = ceilPercent(energyCost, GAS_MARGIN) + bandwidth;
    // An address that never received TRX does not exist on the chain and cannot send anything: it needs gas too.
    if (!exists || balance < need) return { state: 'NEEDS_GAS', gas: { network: 'TRON', currency: 'TRX', amount: unitsOf(need - (exists ? balance : 0n)), rate: price } };
    const feeLimit = feeLimitFor(energyCost);
    return { state: 'READY', fee: { network: 'TRON', currency: 'TRX', amount: unitsOf(energyCost + bandwidth), rate: price }, build: (tapos) => trc20Transfer(source.address, contract, hot, source.amount, feeLimit, tapos) };
  };

  return {
    hotWalletAddress: async () => (await keys.hotWallet()).address,
    signWithdrawal: async (order) => signed(await signFromHotWallet(order)),
    broadcast: async (_network, rawTx) => send(rawTx),
    estimateFee,
    async replaceByFee() {
      throw new ChainUnsupportedError('TRON has no replacement by fee: a transaction is included or expires (then the chain proves it absent)');
    },

    async holdings() {
      const rows = await pool.query<{ address: string }>(`SELECT address FROM deposit_addresses WHERE network = 'TRON'`);
      const addresses = [...new Set([...rows.rows.map((r) => r.address), (await keys.hotWallet()).address])];
      const totals: Record<string, Units> = { TRX: unitsOf(0n), ...Object.fromEntries([...contracts.keys()].map((currency) => [currency, unitsOf(0n)])) };
      for (const address of addresses) {
        totals.TRX = unitsOf((totals.TRX ?? 0n) + (await trxBalance(address)).balance);
        for (const [currency, contract] of contracts) totals[currency] = unitsOf((totals[currency] ?? 0n) + (await tokenBalance(contract, address)));
      }
      return totals;
    },

    async addressHoldings() {
      const rows = await pool.query<{ address: string; derivation_index: number }>(`SELECT address, derivation_index FROM deposit_addresses WHERE network = 'TRON'`);
      const keyed = new Map(rows.rows.map((r) => [r.address, r.derivation_index]));
      keyed.set((await keys.hotWallet()).address, HOT_WALLET_INDEX);
      const held: AddressHolding[] = [];
      for (const [address, index] of keyed) {
        const balances: Record<string, Units> = { TRX: (await trxBalance(address)).balance };
        for (const [currency, contract] of contracts) balances[currency] = await tokenBalance(contract, address);
        if (Object.values(balances).some((units) => units > 0n)) held.push({ address, path: `m/44'/195'/0'/0/${index}`, balances });
      }
      return held;
    },

    collection: {
      sweeps: () => true,
      async sweep(source) {
        const hot = (await keys.hotWallet()).address;
        const kept = await store.byReference(source.reference);
        if (kept && !(await expiredAndAbsent(kept))) {
          await sendKept(kept);
          return { state: 'SENT', signed: signed(kept), fee: { network: 'TRON', currency: 'TRX', amount: kept.fee } };
        }
        const plan = await planSweep(source, hot);
        if (plan.state !== 'READY') return plan;
        const key = await keys.at(source.index);
        if (key.address !== source.address) throw new Error(`derivation ${source.index} is ${key.address}, not ${source.address}`);
        const made = await signOnce(source.reference, key, plan.fee.amount, plan.build);
        await send(made.rawTx);
        return { state: 'SENT', signed: signed(made), fee: { network: 'TRON', currency: 'TRX', amount: made.fee } };
      },
      async topUpGas(target) {
        const made = await signFromHotWallet({ reference: target.reference, currency: 'TRX', toAddress: target.address, amount: target.amount });
        await sendKept(made);
        return signed(made);
      },
    },
  };
}

function ceilPercent(value: bigint, percent: bigint): bigint {
  return (value * percent + 99n) / 100n;
}

/** fee_limit: what a TRC-20 call may burn at most, the estimate with a margin, at least 1 TRX. */
function feeLimitFor(estimate: bigint): Units<'TRX'> {
  const limit = ceilPercent(estimate, FEE_LIMIT_MARGIN);
  return unitsOf(limit > 1_000_000n ? limit : 1_000_000n);
}

function decodeMessage(message: string | undefined): string {
  if (!message) return 'no reason given';
  return /^[0-9a-f]+$/i.test(message) && message.length % 2 === 0 ? Buffer.from(message, 'hex').toString('utf8') : message;
}
