/**
 * The hot wallet's transactions: EIP-1559, fee caps from `eth_feeHistory`, the nonce from the PostgreSQL sequence
 * (nonces.ts) so the same withdrawal always signs to the same bytes, the hash (keccak256 of the bytes) known before
 * sending; an idempotent broadcast; a replacement by fee with the same nonce.
 */
import { encodeFunctionData, erc20Abi, getAddress, keccak256, parseTransaction, TransactionNotFoundError, type Address, type Hash, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { BroadcastRejectedError, HotWalletShortError, type FeeEstimate, type FeeQuery, type HotWalletFees, type SignedWithdrawal, type WithdrawalChainPort } from '../port.ts';
import { contractOf, type EvmContext } from './context.ts';
import { bumped, feeCaps, withMargin, type FeeCaps } from './fees.ts';
import { findSigned, saveSigned, signOnce, type SignedTx } from './nonces.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** Gas of a plain ETH transfer to an account without code. */
export const TRANSFER_GAS = 21_000n;
/** When the node cannot estimate a token transfer (the hot wallet holds too little to simulate it): a USDT transfer to a new holder. */
const TOKEN_TRANSFER_GAS_FALLBACK = 80_000n;

/** The reference a hot-wallet transfer (a withdrawal, a cold sweep) is kept under in evm_transactions; its replacements add to it. */
const keptAs = (reference: string) => `withdrawal:${reference}`;

/** What a transaction moves: `to`, `value`, `data` (a token's `transfer` call, or none). */
export type Call = { to: Address; value: bigint; data?: Hex | undefined };

/** The call that pays `amount` of `currency` to `toAddress`: a value transfer for ETH, `transfer(to, amount)` on the token's contract. */
export function paymentCall(context: EvmContext, currency: string, toAddress: string, amount: Units): Call {
  const to = getAddress(toAddress);
  if (currency === 'ETH') return { to, value: amount };
  return { to: contractOf(context, currency), value: 0n, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }) };
}

/**
 * The gas `call` needs from `from`, with a margin above a plain transfer's unless `exact`; `fallback` when the node
 * refuses to estimate.
 */
export async function gasOf(context: EvmContext, from: Address, call: Call, fallback?: bigint, exact = false): Promise<bigint> {
  try {
    const gas = await context.client.estimateGas({ account: from, ...call });
    return exact ? gas : withMargin(gas);
  } catch (error) {
    if (fallback === undefined) throw error;
    return fallback;
  }
}

/** Signs `call` from `account` once per reference, with the address's next nonce. */
export async function signCall(context: EvmContext, account: PrivateKeyAccount, reference: string, call: Call, gas: bigint, caps: FeeCaps): Promise<SignedTx> {
  const chainId = await context.chainId();
  return signOnce(context.pool, {
    reference,
    fromAddress: account.address,
    pendingCount: () => context.client.getTransactionCount({ address: account.address, blockTag: 'pending' }),
    build: (nonce) => account.signTransaction({ type: 'eip1559', chainId, nonce: Number(nonce), gas, maxFeePerGas: caps.maxFeePerGas, maxPriorityFeePerGas: caps.maxPriorityFeePerGas, ...call }),
  });
}

/**
 * Sends a signed transaction; the node already having it (or having mined it) is success. A nonce already taken by
 * another transaction is a refusal for good; anything else (node down, funds short for now) may be tried again.
 */
export async function sendRaw(context: EvmContext, rawTx: Hex): Promise<Hash> {
  const txHash = keccak256(rawTx);
  try {
    parseTransaction(rawTx);
  } catch (error) {
    throw new BroadcastRejectedError(`not an Ethereum transaction: ${(error as Error).message}`);
  }
  try {
    return await context.client.sendRawTransaction({ serializedTransaction: rawTx });
  } catch (error) {
    const message = String((error as { details?: string }).details ?? (error as Error).message);
    if (!/already known|known transaction|already imported|nonce too low|nonce has already been used/i.test(message)) throw error;
    if (await isKnown(context, txHash)) return txHash;
    if (/nonce/i.test(message)) throw new BroadcastRejectedError(`the nonce of ${txHash} was used by another transaction`);
    throw error;
  }
}

async function isKnown(context: EvmContext, hash: Hash): Promise<boolean> {
  try {
    await context.client.getTransaction({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

const toSigned = (tx: SignedTx): SignedWithdrawal => ({ rawTx: tx.rawTx, txHash: tx.txHash, fromAddress: tx.fromAddress });

export function createEvmSender(context: EvmContext): Pick<WithdrawalChainPort, 'hotWalletAddress' | 'signWithdrawal' | 'broadcast' | 'hotWalletFunds' | 'signedBefore'> & HotWalletFees {
  const hot = () => context.keys.hot();
  /** The hot address's balance of `currency` (ETH or a token's). */
  const funds = async (currency: string) =>
    currency === 'ETH'
      ? unitsOf(await context.client.getBalance({ address: context.keys.hotAddress() }))
      : unitsOf(await context.client.readContract({ address: contractOf(context, currency), abi: erc20Abi, functionName: 'balanceOf', args: [context.keys.hotAddress()] }));
  return {
    hotWalletAddress: () => Promise.resolve(context.keys.hotAddress()),
    signedBefore: async (_network, reference) => (await findSigned(context.pool, { reference: keptAs(reference) })) !== undefined,
    hotWalletFunds: async (_network, currency) => {
      await context.chainId();
      return funds(currency);
    },

    async signWithdrawal(order) {
      await context.chainId();
      const call = paymentCall(context, order.currency, order.toAddress, order.amount);
      // The estimate runs the transfer: one the hot wallet cannot pay now is refused here (HotWalletShortError when
      // the balance is the reason) and tried again later.
      const short = () => new HotWalletShortError(`the hot wallet holds too little ${order.currency} to pay ${order.amount} and its gas`);
      const [gas, caps] = await Promise.all([
        gasOf(context, context.keys.hotAddress(), call).catch(async (error: unknown) => {
          throw (await funds(order.currency)) < order.amount ? short() : error;
        }),
        feeCaps(context.client),
      ]);
      if (order.currency === 'ETH' && (await funds('ETH')) < order.amount + gas * caps.maxFeePerGas) throw short();
      return toSigned(await signCall(context, hot(), keptAs(order.reference), call, gas, caps));
    },

    async broadcast(_network, rawTx) {
      await context.chainId();
      return { txHash: await sendRaw(context, rawTx as Hex) };
    },

    async estimateFee(query: FeeQuery): Promise<FeeEstimate> {
      await context.chainId();
      // Priced without the amount: what the hot wallet holds right now does not change what a transfer costs.
      const call = paymentCall(context, query.currency, query.toAddress, unitsOf(query.currency === 'ETH' ? 0n : 1n));
      const [gas, caps] = await Promise.all([gasOf(context, context.keys.hotAddress(), call, query.currency === 'ETH' ? TRANSFER_GAS : TOKEN_TRANSFER_GAS_FALLBACK), feeCaps(context.client)]);
      return { network: 'ETHEREUM', currency: 'ETH', amount: unitsOf(gas * caps.maxFeePerGas), rate: caps.maxFeePerGas };
    },

    async replaceByFee(stuck, fee) {
      await context.chainId();
      const old = parseTransaction(stuck.signed.rawTx as Hex);
      if (old.type !== 'eip1559' || old.nonce === undefined || old.gas === undefined || old.to == null) throw new Error(`${stuck.signed.txHash} is not one of the hot wallet's EIP-1559 transactions`);
      // Only the fee changes: the payment is the order's own (its approved destination and amount), never what the
      // stored transaction says, so a transaction rewritten in the database cannot be signed anew with the hot key.
      const payment = paymentCall(context, stuck.order.currency, stuck.order.toAddress, stuck.order.amount);
      if (getAddress(old.to) !== getAddress(payment.to) || (old.value ?? 0n) !== payment.value || (old.data ?? '0x').toLowerCase() !== (payment.data ?? '0x').toLowerCase()) {
        throw new Error(`${stuck.signed.txHash} does not pay withdrawal ${stuck.order.reference}'s order: not replaced`);
      }
      const caps = bumped({ maxFeePerGas: old.maxFeePerGas ?? 0n, maxPriorityFeePerGas: old.maxPriorityFeePerGas ?? 0n }, await feeCaps(context.client), fee.rate ?? 0n);
      const account = hot();
      const rawTx = await account.signTransaction({ type: 'eip1559', chainId: await context.chainId(), nonce: old.nonce, gas: old.gas, ...payment, ...caps });
      const tx: SignedTx = { reference: `${keptAs(stuck.order.reference)}:fee:${caps.maxFeePerGas}`, fromAddress: account.address, nonce: BigInt(old.nonce), rawTx, txHash: keccak256(rawTx) };
      return toSigned(await saveSigned(context.pool, tx));
    },
  };
}
