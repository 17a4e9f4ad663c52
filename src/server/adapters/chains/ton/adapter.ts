/**
 * The TON adapter: the chain port for TON on a toncenter-compatible HTTP API (README.md beside this file).
 * Reading is reader.ts, signed messages exactly once per reference are messages.ts, the wallets wallets.ts.
 */
import type pg from 'pg';
import { Address, internal, SendMode, type MessageRelaxed } from '@ton/core';
import type { Network } from '../../../../lib/currencies.ts';
import { BroadcastRejectedError, ChainUnsupportedError, transferKey, type ChainAdapter, type ChainAddressing, type ChainEnv, type FeeEstimate, type RecipientState, type SignedWithdrawal, type TransferStatus } from '../port.ts';
import { createTonApi, hexHash, type TonApi, type V3Transaction } from './api.ts';
import { createTonMessages, messageHashOfBoc, type StoredMessage } from './messages.ts';
import { createDepositAddressSet, createTonScanner, failureOf, feeOf } from './reader.ts';
import { createTonWallets, HOT_WALLET_INDEX } from './wallets.ts';
import type { WalletKeys } from '../../keys/port.ts';
import { keysOf } from '../../keys/wallet-keys.ts';
import { sumUnits, unitsOf, type Units } from '../../../../lib/money.ts';

/** Confirmations (masterchain blocks) a deposit waits for unless CONFIRMATIONS says otherwise: the indexer serves finalised blocks. */
export const TON_DEFAULT_CONFIRMATIONS = 1;
/** What a wallet v4R2 transfer costs at most today (about 0.0055 TON measured in the emulator), for the fee estimate. */
export const TON_TRANSFER_FEE = unitsOf<'TON'>(10_000_000n);
/** A deposit wallet is swept once it holds at least this (0.05 TON): below it the deploy and transfer fees eat too much of it. */
export const TON_SWEEP_THRESHOLD = 50_000_000n;

const SEND_MODE = SendMode.PAY_GAS_SEPARATELY | SendMode.IGNORE_ERRORS;
/** The prefixes of a withdrawal's and a sweep's reference in `ton_messages`. */
const WITHDRAWAL = 'withdrawal:';
const SWEEP = 'sweep:';

export type TonAdapterOptions = {
  apiUrl: string;
  apiKey?: string | undefined;
  env: ChainEnv;
  /** The custody keys (public only outside the signer); `seed`: every key of a bare seed (tests). */
  keys?: WalletKeys | undefined;
  seed?: Uint8Array | undefined;
  addresses: ChainAddressing;
  confirmations?: number | undefined;
  /** A TonApi over something else than HTTP (tests); default: the HTTP client of `apiUrl`. */
  api?: TonApi;
  /** CHAIN_CALL_TIMEOUT_MS: each call's timeout outside a request; default the client's own. */
  callTimeoutMs?: number | undefined;
};

export function createTonAdapter(pool: pg.Pool, options: TonAdapterOptions): ChainAdapter {
  const api = options.api ?? createTonApi({ apiUrl: options.apiUrl, apiKey: options.apiKey, ...(options.callTimeoutMs === undefined ? {} : { timeoutMs: options.callTimeoutMs }) });
  const testOnly = options.env !== 'mainnet';
  const confirmations = options.confirmations ?? TON_DEFAULT_CONFIRMATIONS;
  const keys = keysOf(options);
  const wallets = createTonWallets(keys);
  const messages = createTonMessages(pool, api);
  const depositAddresses = createDepositAddressSet(pool);
  // Addresses shown for senders: non-bounceable, as wallets show accounts.
  const format = (raw: string) => Address.parse(raw).toString({ bounceable: false, urlSafe: true, testOnly });
  const scan = createTonScanner(api, depositAddresses, format);
  const hotWallet = () => wallets(HOT_WALLET_INDEX);
  /** Deposits this process scanned, by transaction hash: their masterchain block (TON does not reorganise it). */
  const depositBlocks = new Map<string, number>();
  const onlyTon = (network: Network) => {
    if (network !== 'TON') throw new ChainUnsupportedError(`the TON adapter does not run ${network}`);
  };
  const estimate = (): FeeEstimate => ({ network: 'TON', currency: 'TON', amount: TON_TRANSFER_FEE });

  /** The custody's spelling of the hot wallet (domain/addresses.ts), checked against the wallet this adapter signs with. */
  const hotAddress = (async () => {
    const [wallet, shown] = await Promise.all([hotWallet(), options.addresses.derive(keys, 'TON', HOT_WALLET_INDEX)]);
    if (Address.parse(shown).toRawString() !== wallet.raw) throw new Error('the custody derives another TON hot wallet than the adapter signs with');
    return shown;
  })();
  hotAddress.catch(() => {});

  const signed = (message: StoredMessage, from: string): SignedWithdrawal => ({ rawTx: message.boc, txHash: message.hash, fromAddress: from });

  async function sign(reference: string, index: number, outgoing: MessageRelaxed[], sendMode: number): Promise<StoredMessage> {
    return messages.prepare(reference, await wallets(index), outgoing, sendMode);
  }

  async function send(boc: string): Promise<void> {
    const hash = messageHashOfBoc(boc);
    const stored = (await messages.byHashes([hash])).get(hash);
    // Sending a message that can no longer land would only be refused later: say so now, for good.
    if (stored && (await messages.isDead(stored))) throw new BroadcastRejectedError(`the message's valid_until (${stored.validUntil}) has passed and it is not on the chain`);
    try {
      await api.sendBoc(boc);
    } catch (error) {
      // Refused now (a seqno ahead of the wallet's while an earlier message lands) is not refused for good: the
      // worker sends again later. Already on the chain is success.
      if (stored && (await messages.landed(stored))) return;
      throw error;
    }
  }

  async function statusOf(refs: readonly { txHash: string; outputIndex: number }[]): Promise<Map<string, TransferStatus>> {
    const statuses = new Map<string, TransferStatus>();
    if (refs.length === 0) return statuses;
    const tip = await api.tip();
    const ours = await messages.byHashes(refs.map((r) => r.txHash));
    for (const ref of refs) {
      const message = ours.get(ref.txHash);
      // A deposit this process scanned: its block is final, no need to ask.
      const scanned = message ? undefined : depositBlocks.get(ref.txHash);
      if (scanned !== undefined) {
        statuses.set(transferKey(ref), { state: 'SEEN', blockHeight: scanned, confirmations: Math.max(0, tip.seqno - scanned + 1) });
        continue;
      }
      // Ours: a withdrawal or sweep, found by its external message; anything else is a deposit, by transaction hash.
      const tx = message ? await messages.landed(message) : await api.transactionByHash(ref.txHash);
      if (!tx) {
        if (message && (await messages.isDead(message, tip.utime))) statuses.set(transferKey(ref), { state: 'DROPPED' });
        // Not on the chain yet (sent, or not sent): no answer, the worker sends it or waits.
        continue;
      }
      const failure = message ? failureOf(tx) : undefined;
      const fee = message ? feeOf(tx) : undefined;
      const seen: TransferStatus = { state: 'SEEN', blockHeight: tx.mc_block_seqno, confirmations: Math.max(0, tip.seqno - tx.mc_block_seqno + 1), fee };
      if (failure) statuses.set(transferKey(ref), { state: 'FAILED', blockHeight: tx.mc_block_seqno, fee, reason: failure });
      else if (message?.reference.startsWith(WITHDRAWAL) && fee !== undefined) statuses.set(transferKey(ref), await delivery(tx, seen, fee));
      else if (message?.reference.startsWith(SWEEP) && fee !== undefined) statuses.set(transferKey(ref), await arrival(tx, seen, fee));
      else statuses.set(transferKey(ref), seen);
    }
    return statuses;
  }

  /**
   * A withdrawal is done once its transfer reached the recipient: until the recipient's transaction is on the chain
   * it has no confirmations; a transfer the recipient bounced (a bounceable address of an undeployed wallet) came
   * back to the hot wallet less fees: FAILED, its fee what the custody lost.
   */
  async function delivery(tx: V3Transaction, seen: TransferStatus & { state: 'SEEN' }, fee: Units): Promise<TransferStatus> {
    const sent = tx.out_msgs[0];
    if (!sent) return seen;
    const received = await api.transactionByInMessage(hexHash(sent.hash));
    if (!received) return { ...seen, confirmations: 0 };
    if (!received.description.bounce) return seen;
    const bounced = received.out_msgs.find((m) => m.bounced);
    // The hot wallet's own transaction taking the bounce back costs its fees too: the loss is known once it is mined.
    const back = bounced ? await api.transactionByInMessage(hexHash(bounced.hash)) : undefined;
    if (bounced && !back) return { ...seen, confirmations: 0 };
    const lost = unitsOf(fee + BigInt(sent.value ?? '0') - BigInt(bounced?.value ?? '0') + BigInt(back?.total_fees ?? '0'));
    return { state: 'FAILED', blockHeight: tx.mc_block_seqno, fee: lost, reason: 'the recipient bounced the transfer (a bounceable address of a wallet not deployed): it came back less fees' };
  }

  /**
   * A sweep lands in the hot wallet, whose transaction taking it in costs the custody its compute and storage fees:
   * the sweep's fee is both (so the gas float's booking matches what the custody's wallets lost), and it has no
   * confirmations until the hot wallet's transaction is on the chain.
   */
  async function arrival(tx: V3Transaction, seen: TransferStatus & { state: 'SEEN' }, fee: Units): Promise<TransferStatus> {
    const sent = tx.out_msgs[0];
    if (!sent) return seen;
    const received = await api.transactionByInMessage(hexHash(sent.hash));
    if (!received) return { ...seen, confirmations: 0 };
    return { ...seen, fee: unitsOf(fee + BigInt(received.total_fees)) };
  }

  return {
    networks: ['TON'],
    requiredConfirmations: () => confirmations,
    // Regtest has no public explorer (CHAIN_ENV). A withdrawal's or sweep's hash is its external message's: that
    // tonviewer resolves it like a transaction's was not checked here (no network).
    explorerUrl: () => (options.env === 'regtest' ? undefined : testOnly ? 'https://testnet.tonviewer.com/transaction/{tx}' : 'https://tonviewer.com/transaction/{tx}'),
    async scan(network, cursor, limit) {
      onlyTon(network);
      const batch = await scan(cursor, limit);
      if (depositBlocks.size > 100_000) depositBlocks.clear();
      for (const transfer of batch.transfers) if (transfer.blockHeight !== null) depositBlocks.set(transfer.txHash, transfer.blockHeight);
      return batch;
    },
    async status(network, refs) {
      onlyTon(network);
      return statusOf(refs);
    },
    hotWalletAddress: () => hotAddress,
    async signWithdrawal(order) {
      onlyTon(order.network);
      if (order.currency !== 'TON') throw new ChainUnsupportedError(`the TON adapter sends TON only, not ${order.currency}`);
      const to = parseRecipient(order.toAddress);
      const reference = `${WITHDRAWAL}${order.reference}`;
      // A hot wallet short of the amount refuses to sign a new message: the withdrawal keeps its hold and is signed
      // once the wallet is funded, instead of failing on the chain. (In-flight messages are not counted: one that
      // still cannot be paid when it lands is skipped and FAILED below.)
      if (!(await messages.latest(reference))) {
        const { balance } = await api.walletInformation((await hotWallet()).raw);
        if (balance < order.amount + TON_TRANSFER_FEE) throw new Error(`the TON hot wallet holds ${balance} nanoton, less than ${order.amount} and its fee: fund it`);
      }
      // PAY_GAS_SEPARATELY: the recipient gets exactly `amount`. IGNORE_ERRORS: a transfer the wallet cannot pay is
      // skipped and the seqno still moves on; without it the failed action phase would roll the seqno back and leave
      // the message valid, to land later (after its withdrawal failed) once the wallet is funded again. `status`
      // reports the skipped one as FAILED with its fee (reader.ts failureOf).
      const message = await sign(reference, HOT_WALLET_INDEX, [internal({ to: to.address, value: order.amount, bounce: to.bounce })], SEND_MODE);
      return signed(message, await hotAddress);
    },
    async broadcast(network, rawTx) {
      onlyTon(network);
      await send(rawTx);
      return { txHash: messageHashOfBoc(rawTx) };
    },
    async estimateFee(query) {
      onlyTon(query.network);
      return estimate();
    },
    replaceByFee: () => Promise.reject(new ChainUnsupportedError('TON has no replace-by-fee: a message that cannot land expires at its valid_until')),
    async holdings(network) {
      onlyTon(network);
      await depositAddresses.refresh();
      const rows = await pool.query<{ address: string }>(`SELECT address FROM deposit_addresses WHERE network = 'TON'`);
      const balances = await api.balances([(await hotWallet()).raw, ...rows.rows.map((r) => Address.parse(r.address).toRawString())]);
      return { TON: sumUnits(balances) };
    },
    async addressHoldings(network) {
      onlyTon(network);
      await depositAddresses.refresh();
      const rows = await pool.query<{ address: string; derivation_index: number }>(`SELECT address, derivation_index FROM deposit_addresses WHERE network = 'TON'`);
      const hot = await options.addresses.derive(keys, 'TON', HOT_WALLET_INDEX);
      const held = [{ address: hot, index: HOT_WALLET_INDEX }, ...rows.rows.map((r) => ({ address: r.address, index: r.derivation_index }))];
      const balances = await api.balances(held.map((k) => Address.parse(k.address).toRawString()));
      return held.flatMap((k, i) => ((balances[i] ?? 0n) > 0n ? [{ address: k.address, path: `m/44'/607'/${k.index}'`, balances: { TON: balances[i] ?? unitsOf(0n) } }] : []));
    },
    async accountState(network, address): Promise<RecipientState> {
      onlyTon(network);
      const status = await api.accountStatus(Address.parse(address).toRawString());
      return status === 'active' ? 'ACTIVE' : 'UNINITIALISED';
    },
    collection: {
      sweeps: (network) => network === 'TON',
      async sweep(source) {
        onlyTon(source.network);
        if (source.currency !== 'TON') return { state: 'NOT_NEEDED', reason: `the TON adapter sweeps TON only, not ${source.currency}` };
        const reference = `${SWEEP}${source.reference}`;
        const wallet = await wallets(source.index);
        if (Address.parse(source.address).toRawString() !== wallet.raw) throw new Error(`derivation ${source.index} is not the TON address ${source.address}`);
        let message = await messages.latest(reference);
        if (!message) {
          const { balance } = await api.walletInformation(wallet.raw);
          if (balance < TON_SWEEP_THRESHOLD) return { state: 'NOT_NEEDED', reason: `the wallet holds ${balance} nanoton, below the sweep threshold of ${TON_SWEEP_THRESHOLD}` };
        }
        // Everything the wallet holds goes to the hot wallet, fees taken from it (mode 128): nothing is left to top
        // up or to strand. The first sweep deploys the wallet (StateInit, messages.ts); later ones find it active.
        const hot = await hotWallet();
        message = await sign(reference, source.index, [internal({ to: hot.contract.address, value: 0n, bounce: false })], SendMode.CARRY_ALL_REMAINING_BALANCE | SendMode.IGNORE_ERRORS);
        if (!(await messages.landed(message))) await send(message.boc);
        return { state: 'SENT', signed: signed(message, source.address), fee: estimate() };
      },
      topUpGas: () =>
        Promise.reject(new ChainUnsupportedError("TON sweeps pay their fees from the swept TON (mode 128): there is no token whose address needs the network's coin")),
    },
  };
}

/**
 * A recipient and the bounce flag to send with: as the address says it (`EQ…`/`Ef…` bounceable, `UQ…`/`Uf…` not);
 * a raw `0:…` address carries no flag and is bounceable, TON's default (TEP-2), so a mistyped or undeployed
 * recipient gets the money back instead of holding it.
 */
export function parseRecipient(address: string): { address: Address; bounce: boolean } {
  if (Address.isFriendly(address)) {
    const parsed = Address.parseFriendly(address);
    return { address: parsed.address, bounce: parsed.isBounceable };
  }
  return { address: Address.parseRaw(address), bounce: true };
}
