/**
 * Collection into the hot wallet. Native ETH: the deposit address sends its whole balance less the gas, when that
 * is at least SWEEP_THRESHOLD times the gas (only the unused part of the fee cap stays behind). A token: the address
 * sends the amount once it holds the gas one transfer needs; until then NEEDS_GAS says how much is missing, and
 * `topUpGas` has the hot wallet send exactly that. Each sweep and top-up is signed once per reference (nonces.ts).
 */
import { erc20Abi, getAddress, type Address, type Hex } from 'viem';
import { parseTransaction } from 'viem';
import type { AddressHolding, ChainAdapter, CollectionPort, FeeEstimate, SweepOutcome } from '../port.ts';
import { HOT_WALLET_INDEX } from '../devnet-signer.ts';
import { contractOf, type EvmContext } from './context.ts';
import { feeCaps, sweepCaps } from './fees.ts';
import { findSigned, type SignedTx } from './nonces.ts';
import { gasOf, paymentCall, sendRaw, signCall, TRANSFER_GAS } from './sender.ts';
import { unitsOf, type Units } from '../../../../lib/money.ts';

/** ETH is swept when the gas is at most a twentieth of what moves. */
export const SWEEP_THRESHOLD = 20n;
/** A token's transfer when the node cannot estimate it from the deposit address. */
const TOKEN_SWEEP_GAS_FALLBACK = 100_000n;

const feeOf = (rawTx: Hex): FeeEstimate => {
  const tx = parseTransaction(rawTx);
  const rate = tx.maxFeePerGas ?? 0n;
  return { network: 'ETHEREUM', currency: 'ETH', amount: unitsOf((tx.gas ?? 0n) * rate), rate };
};

const sent = (tx: SignedTx): SweepOutcome => ({ state: 'SENT', signed: { rawTx: tx.rawTx, txHash: tx.txHash, fromAddress: tx.fromAddress }, fee: feeOf(tx.rawTx) });

export function createEvmCollection(context: EvmContext): CollectionPort {
  const { client } = context;
  return {
    sweeps: (network) => network === 'ETHEREUM',

    async sweep(source) {
      await context.chainId();
      // Signed before (the process may have died before or after sending): the same bytes again.
      const saved = await findSigned(context.pool, { reference: source.reference });
      if (saved) {
        await sendRaw(context, saved.rawTx);
        return sent(saved);
      }
      const account = context.keys.at(source.index);
      if (account.address.toLowerCase() !== source.address.toLowerCase()) throw new Error(`derivation ${source.index} is ${account.address}, not ${source.address}`);
      const hot = context.keys.hotAddress();
      const [market, balance] = await Promise.all([feeCaps(client), client.getBalance({ address: account.address })]);
      const caps = sweepCaps(market, market.nextBase);
      let tx: SignedTx;
      if (source.currency === 'ETH') {
        const cost = TRANSFER_GAS * caps.maxFeePerGas;
        if (balance < cost * (SWEEP_THRESHOLD + 1n)) return { state: 'NOT_NEEDED', reason: `below the sweep threshold (${balance} wei against ${cost} wei of gas)` };
        tx = await signCall(context, account, source.reference, { to: hot, value: balance - cost }, TRANSFER_GAS, caps);
      } else {
        const call = paymentCall(context, source.currency, hot, source.amount);
        const held = await client.readContract({ address: contractOf(context, source.currency), abi: erc20Abi, functionName: 'balanceOf', args: [account.address] });
        if (held < source.amount) throw new Error(`${source.address} holds ${held} of ${source.currency}, less than the ${source.amount} to sweep`);
        // The exact estimate: the address and the hot wallet are the only parties, and the top-up pays exactly it.
        const gas = await gasOf(context, account.address, call, TOKEN_SWEEP_GAS_FALLBACK, true);
        const cost = gas * caps.maxFeePerGas;
        if (balance < cost) return { state: 'NEEDS_GAS', gas: { network: 'ETHEREUM', currency: 'ETH', amount: unitsOf(cost - balance), rate: caps.maxFeePerGas } };
        // Bid all the address holds: whatever the block does not charge is the only ETH left behind.
        const maxFeePerGas = balance / gas;
        const maxPriorityFeePerGas = caps.maxPriorityFeePerGas < maxFeePerGas ? caps.maxPriorityFeePerGas : maxFeePerGas;
        tx = await signCall(context, account, source.reference, call, gas, { maxFeePerGas, maxPriorityFeePerGas });
      }
      await sendRaw(context, tx.rawTx);
      return sent(tx);
    },

    async topUpGas(target) {
      await context.chainId();
      const hot = context.keys.hot();
      const tx = await signCall(context, hot, target.reference, { to: target.address as Address, value: target.amount }, TRANSFER_GAS, await feeCaps(client));
      await sendRaw(context, tx.rawTx);
      return { rawTx: tx.rawTx, txHash: tx.txHash, fromAddress: tx.fromAddress };
    },
  };
}

/** ETH and each token held by the hot wallet and every deposit address, at the latest block. */
export function createEvmHoldings(context: EvmContext, path: (index: number) => string): Pick<ChainAdapter, 'holdings' | 'addressHoldings'> {
  const byAddress = async (): Promise<AddressHolding[]> => {
    await context.chainId();
    const rows = await context.pool.query<{ address: string; derivation_index: number }>(`SELECT address, derivation_index FROM deposit_addresses WHERE network = 'ETHEREUM'`);
    const keys = new Map(rows.rows.map((r) => [getAddress(r.address), r.derivation_index]));
    keys.set(context.keys.hotAddress(), HOT_WALLET_INDEX);
    const held: AddressHolding[] = [];
    for (const [address, index] of keys) {
      const balances: Record<string, Units> = { ETH: unitsOf(await context.client.getBalance({ address })) };
      for (const [currency, contract] of context.tokenContract) {
        balances[currency] = unitsOf(await context.client.readContract({ address: contract, abi: erc20Abi, functionName: 'balanceOf', args: [address] }));
      }
      held.push({ address, path: path(index), balances });
    }
    return held;
  };
  return {
    async holdings() {
      const totals: Record<string, Units> = { ETH: unitsOf(0n), ...Object.fromEntries([...context.tokenContract.keys()].map((currency) => [currency, unitsOf(0n)])) };
      for (const { balances } of await byAddress()) for (const [currency, units] of Object.entries(balances)) totals[currency] = unitsOf((totals[currency] ?? 0n) + units);
      return totals;
    },
    addressHoldings: async () => (await byAddress()).filter((h) => Object.values(h.balances).some((units) => units > 0n)),
  };
}
