/**
 * The ports to blockchains, one per concern (ARCHITECTURE.md, Chains):
 * - reading (`ChainPort`): transfers to the custody's addresses from a cursor, confirmations, status by hash;
 * - the hot wallet (`WithdrawalChainPort`, `HotWalletFees`): fee estimate, build and sign with the hash known before
 *   sending, idempotent broadcast, replace a stuck transaction by fee;
 * - collection (`CollectionPort`): sweeping deposit addresses into the hot wallet on account-based networks, with
 *   gas top-ups for tokens.
 * `ChainAdapter` is all of them: what one network family implements (devnet.ts inside the process; UTXO, EVM, TON
 * and TRON adapters on real nodes) and what open.ts registers per network. The domain uses the narrower ports.
 */
import type { ChainEnv as SharedChainEnv, Network } from '../../../lib/currencies.ts';
import type { Units } from '../../../lib/money.ts';
import type { WalletKeys } from '../keys/port.ts';

/** A transfer of one currency to one address, as one output of one transaction. */
export type ChainTransfer = {
  network: Network;
  txHash: string;
  outputIndex: number;
  currency: string;
  fromAddress: string | null;
  toAddress: string;
  /** Atomic units of `currency`. */
  amount: Units;
  /** The block it is in; null while it waits in the mempool. */
  blockHeight: number | null;
  /**
   * What the custody's address paid the network to take the transfer in, in the network's coin (TON: the deposit
   * wallet's receiving transaction's fees); booked from the gas float when the deposit is recorded. Unset elsewhere.
   */
  receiveFee?: Units | undefined;
};

export type TransferRef = { txHash: string; outputIndex: number };

/** Where a transfer stands now: confirmations (0 in the mempool), or dropped from the chain. */
/**
 * Where a transfer stands now: confirmations (0 in the mempool), dropped from the chain, or mined but failed. `fee` is what the
 * transaction paid the network, in atomic units of the network's own coin, once the adapter knows it (a mined
 * withdrawal's or sweep's: UTXO inputs less outputs, EVM gas used × effective price); the worker books it to
 * the gas float or NETWORK_FEES (ledger.ts, networkFeePayer).
 */
export type TransferStatus =
  | { state: 'SEEN'; blockHeight: number | null; confirmations: number; fee?: Units | undefined }
  | { state: 'DROPPED' }
  /** Mined but it did nothing (an EVM revert, a TON transaction whose action phase failed): the fee is spent. */
  | { state: 'FAILED'; blockHeight: number; fee?: Units | undefined; reason: string };

/** A block by height and hash: where a scan stopped, so the next one can tell whether it is still on the chain. */
export type BlockRef = { height: number; hash: string };

/**
 * A reorganisation a scan noticed: the block its cursor named (`orphaned`) is no longer on the best chain. The
 * adapter has already rewound: the batch reads again from `rescanFrom`, so transfers of replaced blocks that are
 * still on the chain come again (recorded once, by output) with their new height, and those that left the chain
 * answer DROPPED (or SEEN without a block, back in the mempool) to `status`. What the scanner owes: re-check the
 * deposits at or above `rescanFrom` by `status` before crediting them, and alert an operator about any it already
 * credited there (their confirmations did not hold).
 */
export type ChainReorg = {
  orphaned: BlockRef;
  rescanFrom: number;
  /**
   * Set when the node's best chain ends below the cursor's block (it came back having lost blocks): how many. The
   * rewind then counts from the node's tip, so every block it lost is in the unwound range.
   */
  lostBlocks?: number | undefined;
};

/**
 * One scan's answer. `cursor` is opaque to the scanner, which stores it as it is and passes it back: a block-based
 * adapter encodes the last block read (`blockCursor`: height and hash, which is how it notices a reorganisation);
 * the devnet, which never reorganises, its own sequence number. `reorg` is set on the batch that noticed one.
 */
export type ScanBatch = { transfers: ChainTransfer[]; cursor: string | null; reorg?: ChainReorg | undefined };

export type ChainPort = {
  readonly networks: readonly Network[];
  /** Confirmations after which a deposit on `network` is credited. */
  requiredConfirmations(network: Network): number;
  /**
   * Transfers seen after `cursor` (null: from the start), mempool ones included. Transfers near the head may be
   * returned again by the next scan: the scanner records each one once, by (network, hash, output).
   */
  scan(network: Network, cursor: string | null, limit: number): Promise<ScanBatch>;
  /** Where each transfer stands now, by transaction hash and output: confirmations, or DROPPED when no chain has it. */
  status(network: Network, transfers: readonly TransferRef[]): Promise<Map<string, TransferStatus>>;
  /**
   * The explorer link of a transaction (`{tx}` placeholder), when this adapter has its own (the devnet's); a real
   * adapter answers undefined and the catalogue links the network's public explorer for CHAIN_ENV (none on regtest).
   */
  explorerUrl(network: Network): string | undefined;
};

/** One outgoing transfer of the custody, to be built and signed by the chain's adapter. */
export type WithdrawalOrder = {
  /** The withdrawal's id: the same order always yields the same signed transaction. */
  reference: string;
  network: Network;
  currency: string;
  toAddress: string;
  /** Atomic units the recipient receives. */
  amount: Units;
};

/** A transaction signed by the custody's hot wallet, ready to broadcast; its hash is known before it is sent. */
export type SignedWithdrawal = { rawTx: string; txHash: string; fromAddress: string };

/** The network refused a transaction for good (bad signature, spent inputs, a devnet told to refuse it). */
export class BroadcastRejectedError extends Error {}

/**
 * The hot wallet cannot pay this order now (too few confirmed outputs, too little balance for the amount and its fee):
 * nothing was signed. A withdrawal then waits for the hot wallet to be refilled (withdrawals/worker.ts).
 */
export class HotWalletShortError extends Error {
  // Named, as the errors below: the signer's answer carries the name, and the worker's side rebuilds the class from it.
  override name = 'HotWalletShortError';
}

/**
 * A stuck transaction needs a fee bump above the network's MAX_FEE_RATE (or has nothing to pay one from): nothing
 * was signed or sent. Thrown once per withdrawal (later calls answer the stuck transaction), so the caller alerts once.
 */
export class FeeBumpBlockedError extends Error {
  override name = 'FeeBumpBlockedError';
}

/**
 * What withdrawals need from a chain besides reading it. `broadcast` is idempotent: the same raw transaction sent
 * again has the same hash and changes nothing, so a worker that is unsure whether it was sent may send it again;
 * the withdrawal job still asks `status` by hash first and only sends what the chain does not know.
 */
export type WithdrawalChainPort = ChainPort & {
  hotWalletAddress(network: Network): Promise<string>;
  signWithdrawal(order: WithdrawalOrder): Promise<SignedWithdrawal>;
  broadcast(network: Network, rawTx: string): Promise<{ txHash: string }>;
  /**
   * Whether a recipient's account has code on the chain (TON: a bounceable transfer to an undeployed wallet comes
   * back). Adapters that cannot tell (the devnet) leave it out: the router answers UNKNOWN.
   */
  accountState?(network: Network, address: string): Promise<RecipientState>;
  /**
   * UTXO_BATCH_SECONDS: withdrawals of `network` wait at most `seconds` to be paid together by one transaction of at
   * most `maxOutputs` payments (`signBatch`); undefined (or absent): one transaction each. One paying less than
   * `minOutput` (dust, which the node refuses) is never batched: it is signed alone and fails alone.
   */
  batching?(network: Network): { seconds: number; maxOutputs: number; minOutput: Units } | undefined;
  /** One transaction paying each of `orders` an output, in this order: the same reference always yields the same one. */
  signBatch?(batch: WithdrawalBatch): Promise<SignedWithdrawal>;
  /**
   * The signer signs only withdrawals with an approval seal (signer/remote.ts): one without (from before the seal) is
   * kept out of batches and not asked for until an operator re-approves it (withdrawals/review.ts resealWithdrawal).
   */
  signsSealedOnly?: boolean;
  /**
   * What the hot wallet can pay out of `currency` now, fee aside (UTXO: its confirmed outputs not reserved; EVM: the
   * hot address's balance): a withdrawal waiting for funds is signed again only once this covers it. Absent: unknown.
   */
  hotWalletFunds?(network: Network, currency: string): Promise<Units>;
  /**
   * Whether a transaction was already signed for `reference` (and took its inputs or its nonce): asked again, the
   * adapter hands back those bytes. The signer then does not take back an approval it has already acted on (a cold
   * sweep whose holdings moved since). Absent: signing takes nothing that a refusal would leave behind.
   */
  signedBefore?(network: Network, reference: string): Promise<boolean>;
  /**
   * UTXO_CONSOLIDATE_BELOW: one transaction moving deposit outputs into the hot wallet's own address, signed only
   * while the network's fee rate is at most `maxRate` (units per vB); undefined when it is above or there is nothing to
   * move. The same reference always yields the same transaction (a stored one is handed back whatever the rate).
   */
  consolidate?(order: { reference: string; network: Network; maxRate: bigint }): Promise<(SignedWithdrawal & { toAddress: string; amount: Units }) | undefined>;
};

/** Withdrawals of one network paid together: `reference` is the batch's id. */
export type WithdrawalBatch = { reference: string; network: Network; orders: readonly Pick<WithdrawalOrder, 'toAddress' | 'amount'>[] };

/** What `accountState` knows of a recipient: deployed, not (uninit, nonexist, frozen), or nothing. */
export type RecipientState = 'ACTIVE' | 'UNINITIALISED' | 'UNKNOWN';


/** Address formats, chain ids and explorer links (CHAIN_ENV); defined beside the catalogue, which the browser shares. */
export type ChainEnv = SharedChainEnv;

/**
 * The chains' settings, from configuration (config-chains.ts: CHAINS, CHAIN_ENV, CONFIRMATIONS, MIN_DEPOSIT, the nodes'
 * URLs): which adapter runs each network and how.
 */
export type ChainSettings = Readonly<{
  /** The stand-in for networks without a node: the simulated devnet (never in production) or none. */
  mode: 'devnet' | 'off';
  /** Address formats, chain ids and explorer links: mainnet, testnet or regtest (no explorer). */
  env: ChainEnv;
  blockMs: number;
  /**
   * CHAIN_CALL_TIMEOUT_MS: each node or API call's timeout outside a request (background jobs); unset keeps each
   * adapter's own (UTXO JSON-RPC 30 s, EVM 20 s, TON and TRON 15 s). A request's calls share CHAIN_REQUEST_BUDGET_MS.
   */
  callTimeoutMs?: number | undefined;
  /** CONFIRMATIONS: after how many a deposit (and a withdrawal) counts, per network; unset ones keep the adapter's default. */
  confirmations: Partial<Record<Network, number>>;
  /** MIN_DEPOSIT: per currency, atomic units below which a deposit is recorded but not credited. */
  minDeposit: Readonly<Record<string, Units>>;
  /** Bitcoin Core–style JSON-RPC nodes (http://user:password@host:port), per UTXO network. */
  utxo: Readonly<{
    nodes: Partial<Record<'BITCOIN' | 'LITECOIN' | 'DOGECOIN', string>>;
    /** FEE_RATE_FALLBACK: sat/vB (DOGECOIN: koinu/vB) when the node estimates nothing. */
    feeRateFallback: Partial<Record<'BITCOIN' | 'LITECOIN' | 'DOGECOIN', bigint>>;
    /** RBF_AFTER_BLOCKS: blocks a withdrawal may wait unmined before it is replaced by fee (BIP125). */
    rbfAfterBlocks: number;
    /** MAX_FEE_RATE: sat/vB (DOGECOIN: koinu/vB) that no transaction of the custody, replacement or CPFP pays above. */
    maxFeeRate: Partial<Record<'BITCOIN' | 'LITECOIN' | 'DOGECOIN', bigint>>;
    /**
     * The test chain the nodes run under CHAIN_ENV=testnet4 or signet (`env` is then `testnet`: same address formats):
     * Bitcoin Core's `testnet4` or `signet`; `test` (testnet3) for CHAIN_ENV=testnet.
     */
    testChain: 'test' | 'testnet4' | 'signet';
    /** UTXO_BATCH_SECONDS: how long a withdrawal waits to be paid with others by one transaction (0: one each). */
    batchSeconds: number;
    /** UTXO_BATCH_MAX_OUTPUTS: the most withdrawals one batch pays. */
    batchMaxOutputs: number;
    /** UTXO_CONSOLIDATE_BELOW: sat/vB (DOGECOIN: koinu/vB) at or under which deposit outputs are consolidated into the hot wallet. */
    consolidateBelow?: Partial<Record<'BITCOIN' | 'LITECOIN' | 'DOGECOIN', bigint>>;
  }>;
  /** An Ethereum JSON-RPC node (http or ws) and the ERC-20 contracts per currency. */
  evm: Readonly<{ rpcUrl: string | undefined; tokens: Readonly<Record<string, string>>; replaceAfterBlocks: number }>;
  /** A toncenter-compatible HTTP API (v3 reading, v2 sending). */
  ton: Readonly<{ apiUrl: string | undefined; apiKey: string | undefined }>;
  /** A TronGrid-compatible full-node HTTP API and the TRC-20 contracts per currency. */
  tron: Readonly<{ apiUrl: string | undefined; apiKey: string | undefined; tokens: Readonly<Record<string, string>> }>;
}>;

export function transferKey(ref: TransferRef): string {
  return `${ref.txHash}:${ref.outputIndex}`;
}

/** A call for a network that has no adapter in this environment (it is off): nothing was done. */
export class ChainOffError extends Error {}

/**
 * The network's node or API did not answer (in time, or at all) or answered something that is not its protocol:
 * nothing is known to have been done, and asking again later may work. The router (open.ts) throws it for every
 * such failure of any adapter, naming the network; the gateway answers it 503 NETWORK_UNAVAILABLE.
 */
export class ChainUnavailableError extends Error {
  readonly network: Network;
  constructor(network: Network, message: string, options?: { cause?: unknown }) {
    super(`${network}: ${message}`, options);
    this.name = 'ChainUnavailableError';
    this.network = network;
  }
}

/**
 * Wraps one call the router makes to a network's adapter (`operation`: the port's method, `scan`, `broadcast`,
 * `collection.sweep`): OpenTelemetry's span around chain node calls when tracing is on (metrics/tracing.ts).
 */
export type ChainCallTrace = <T>(network: Network, operation: string, call: () => Promise<T>) => Promise<T>;

/** The network's adapter cannot do this at all (replace-by-fee on a network without it): nothing was done. */
export class ChainUnsupportedError extends Error {
  override name = 'ChainUnsupportedError';
}

/** `height:hash`, the cursor a block-based adapter returns (see `ScanBatch`). */
export function blockCursor(block: BlockRef): string {
  return `${block.height}:${block.hash}`;
}

/** The block a cursor of `blockCursor` names; null for no cursor (scan from the adapter's start). */
export function parseBlockCursor(cursor: string | null): BlockRef | null {
  if (cursor === null) return null;
  const match = /^(\d{1,15}):(\S+)$/.exec(cursor);
  if (!match?.[1] || !match[2]) throw new Error(`not a block cursor: ${JSON.stringify(cursor)}`);
  return { height: Number(match[1]), hash: match[2] };
}

/** What sending on a network costs the hot wallet now. */
export type FeeEstimate = {
  network: Network;
  /** The currency the fee is paid in: the network's own coin (ETH for USDT_ETH, TRX for USDT_TRX). */
  currency: string;
  /** Atomic units of `currency`: what the custodian's ledger books as the network fee. */
  amount: Units;
  /** The price per unit the estimate assumed (sat/vB, wei per gas), so a replacement can bid above it; absent where fees are flat. */
  rate?: bigint | undefined;
};

/** A withdrawal as a fee is asked for it: the order without its reference. */
export type FeeQuery = Omit<WithdrawalOrder, 'reference'>;

/** A broadcast withdrawal that has waited too long unconfirmed, and the fee it was built with. */
export type StuckWithdrawal = {
  order: WithdrawalOrder;
  signed: SignedWithdrawal;
  fee: FeeEstimate;
  /**
   * Every payment the stuck transaction makes as sealed (the signer's: the order's alone, or each member of its
   * batch): a replacement that would pay anything else is refused. Absent: the order's payment must be among them.
   */
  payments?: readonly { address: string; amount: Units }[];
};

/** The hot wallet beyond signing and sending: what a transfer costs, and bidding again for a stuck one. */
export type HotWalletFees = {
  estimateFee(query: FeeQuery): Promise<FeeEstimate>;
  /**
   * A new transaction for the same withdrawal paying `fee` (above the stuck one's), spending the same inputs or
   * nonce so at most one of the two confirms; its hash is known before sending, like `signWithdrawal`'s. The
   * caller keeps both hashes and asks `status` for each. Throws ChainUnsupportedError where the network has no
   * replacement (TON, TRON). It may answer the stuck transaction itself (same hash: nothing to record) where the
   * node refused the replacement (a UTXO adapter then bumps it by CPFP, whose fee `status` adds to the stuck one's)
   * or no bump is due; FeeBumpBlockedError once when the bump would pay above MAX_FEE_RATE.
   */
  replaceByFee(stuck: StuckWithdrawal, fee: FeeEstimate): Promise<SignedWithdrawal>;
  /**
   * After how many blocks a broadcast transaction still unmined on `network` is replaced (`replaceByFee`); undefined
   * (or absent): never. The withdrawal worker counts the blocks with `tipHeight`.
   */
  replaceAfterBlocks?(network: Network): number | undefined;
  /** The height of the network's best chain now (where `replaceAfterBlocks` is defined). */
  tipHeight?(network: Network): Promise<number>;
};

/** A deposit address holding money that should move to the hot wallet. */
export type SweepSource = {
  network: Network;
  currency: string;
  address: string;
  /** The address's derivation index under the custody seed: the adapter derives its key to sign. */
  index: number;
  /** Atomic units of `currency` to move. */
  amount: Units;
  /** Ours: the same reference always yields the same signed transaction (exactly-once, as for withdrawals). */
  reference: string;
};

/**
 * What a sweep did. SENT: a transaction is on its way (its hash and fee are booked by the caller). NEEDS_GAS: a
 * token's address has no coin to pay gas; `topUpGas` with `gas` first, then sweep again. NOT_NEEDED: nothing to
 * move on this network (UTXO: the hot wallet spends deposit outputs itself; the devnet keeps no balances).
 */
export type SweepOutcome =
  | { state: 'SENT'; signed: SignedWithdrawal; fee: FeeEstimate }
  | { state: 'NEEDS_GAS'; gas: FeeEstimate }
  | { state: 'NOT_NEEDED'; reason: string };

/** Collection: bringing deposits into the hot wallet where the network is account-based (EVM, TRON, TON). */
export type CollectionPort = {
  /** Whether deposits on `network` are swept (account-based) or spent where they are (UTXO, devnet). */
  sweeps(network: Network): boolean;
  /** Builds, signs and broadcasts the sweep of one address (idempotent per `reference`). */
  sweep(source: SweepSource): Promise<SweepOutcome>;
  /** Sends the network's coin from the hot wallet to `address` so it can pay a token sweep's gas. */
  topUpGas(target: { network: Network; address: string; amount: Units; reference: string }): Promise<SignedWithdrawal>;
};

/**
 * The custody's address rules (derivation paths, address formats and checksums), owned by the domain
 * (domain/addresses.ts) and handed by composition to adapters that derive keys or check addresses.
 */
export type ChainAddressing = {
  /** The address of derivation `index` on `network` under the custody's keys (public ones are enough). */
  derive(keys: WalletKeys | Uint8Array, network: Network, index: number): Promise<string>;
  isValid(network: Network, address: string): boolean;
  /** The BIP32 path of derivation `index` (secp256k1 networks; TON derives SLIP-10 ed25519 on m/44'/607'/index'). */
  path(network: Network, index: number): string;
  /** A UTXO network's address parameters under CHAIN_ENV (@scure/btc-signer's NETWORK shape), to build and decode its scripts. */
  utxoParams(network: UtxoNetwork): UtxoParams;
};

export type UtxoNetwork = 'BITCOIN' | 'LITECOIN' | 'DOGECOIN';
/** Bech32 human-readable part, base58 version bytes of key-hash and script-hash addresses, and WIF's. */
export type UtxoParams = Readonly<{ bech32: string; pubKeyHash: number; scriptHash: number; wif: number }>;

/** What the chain shows the custody holding (`npm run custody -- balances` sets it against the ledger). */
export type CustodyHoldings = {
  /**
   * Confirmed atomic units per currency of `network` on every address of the custody (deposit addresses, change,
   * the hot wallet). Throws ChainUnsupportedError where the adapter keeps no balances (the devnet).
   */
  holdings(network: Network): Promise<Record<string, Units>>;
  /**
   * The same holdings address by address, each with the key path that controls it (BIP32, or TON's SLIP-10
   * m/44'/607'/i'), for the proof of reserves' signatures; only addresses holding something. Absent where the adapter
   * cannot tell (the devnet): ChainUnsupportedError through the router.
   */
  addressHoldings?(network: Network): Promise<AddressHolding[]>;
};

/** What one custody address holds (confirmed atomic units per currency) and the key path that controls it. */
export type AddressHolding = { address: string; path: string; balances: Record<string, Units> };

/** Everything one adapter implements for the networks it runs; open.ts registers adapters and routes by network. */
export type ChainAdapter = WithdrawalChainPort & HotWalletFees & CustodyHoldings & { collection: CollectionPort };

/** How the devnet fails the next broadcast to an address: REJECT refuses it, DROP accepts it and never mines it. */
export type DevnetFailureMode = 'REJECT' | 'DROP';
/** Why the devnet refused a faucet deposit or a failure switch: the caller's mistake. */
export type DevnetProblem = 'UNKNOWN_CURRENCY' | 'BAD_ADDRESS' | 'BAD_AMOUNT';

/** A devnet transfer as the faucet answers it; `amount` as the user writes it. */
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

/** One devnet transaction as its explorer page and `npm run devnet -- tx` show it. */
export type DevnetTransaction = DevnetReceipt & { height: number; confirmations: number; requiredConfirmations: number; createdAt: Date };

/** The devnet's own controls beside the chain it simulates: what its sandbox page under /sandbox/devnet serves. */
export type DevnetControls = {
  /** Sends a deposit from the devnet faucet to any valid address; amount as the user writes it. */
  send(input: { currency: string; toAddress: string; amount: string }): Promise<DevnetReceipt>;
  /** Tells the devnet to fail the next broadcast to `address` (for tests and demos of a failed withdrawal). */
  failNext(input: { currency: string; address: string; mode: DevnetFailureMode }): Promise<{ network: Network; address: string; mode: DevnetFailureMode }>;
  /** Every broadcast of a transaction hash the devnet received, oldest first. */
  broadcasts(txHash: string): Promise<{ outcome: string; at: Date }[]>;
  heights(): Promise<Record<string, number>>;
  findTransaction(txHash: string): Promise<DevnetTransaction | undefined>;
  /** The caller's mistake `error` stands for (send and failNext refuse with one), else undefined. */
  refusalOf(error: unknown): { problem: DevnetProblem; message: string } | undefined;
};
