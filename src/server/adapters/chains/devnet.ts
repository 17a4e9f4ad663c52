/**
 * Devnet: a simulated chain per network kept in PostgreSQL, so every process (server, worker, CLI) sees the same
 * chains and deposits survive restarts. Blocks come on a clock (devnet-clock.ts); a transfer is mined in the block
 * after the one current when it was sent. The parts: reading (devnet-reader.ts), the node and hot wallet
 * (devnet-node.ts, devnet-signer.ts) and the faucet here.
 */
import type pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mnemonicToSeedSync } from '@scure/bip39';
import { AmountError, formatUnits, parseAmount } from '../../../lib/amount.ts';
import { NETWORKS, type Network } from '../../../lib/currencies.ts';
import { initDevnetChains, insertDevnetTransfer } from './devnet-clock.ts';
import { createDevnetNode, DevnetError, devnetTarget } from './devnet-node.ts';
import { createDevnetReader } from './devnet-reader.ts';
import { createDevnetSigner, type DevnetSigner } from './devnet-signer.ts';
import { ChainUnsupportedError, type ChainAdapter, type ChainAddressing, type DevnetControls } from './port.ts';
import type { WalletKeys } from '../keys/port.ts';
import { seedKeys } from '../keys/wallet-keys.ts';
import { unitsOf, type Units } from '../../../lib/money.ts';

export { DevnetError } from './devnet-node.ts';

/** Confirmations a deposit waits for on each devnet network unless CONFIRMATIONS says otherwise. */
export const DEVNET_DEFAULT_CONFIRMATIONS: Record<Network, number> = { BITCOIN: 2, LITECOIN: 4, DOGECOIN: 6, ETHEREUM: 12, TRON: 19, TON: 1 };

// A fixed, public devnet-only mnemonic (a BIP39 test vector): the sender of faucet deposits, never a user's key.
const FAUCET_MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

/**
 * `keys` (the custody's, or every key of a bare `seed`) give the hot wallet its keys: with public ones only it
 * verifies and takes deposits but signs nothing; without any it only takes deposits.
 * `addresses` are the custody's address rules (composition passes the domain's).
 */
export type DevnetOptions = { blockMs: number; confirmations?: Partial<Record<Network, number>>; publicUrl: string; keys?: WalletKeys | undefined; seed?: Uint8Array | undefined; addresses: ChainAddressing };

export type DevnetChain = ChainAdapter &
  DevnetControls & {
    /** Creates the chains; `rebase` moves genesis so a changed block time keeps heights continuous. */
    init(options?: { rebase?: boolean }): Promise<void>;
  };

export function createDevnet(pool: pg.Pool, options: DevnetOptions): DevnetChain {
  const confirmations = { ...DEVNET_DEFAULT_CONFIRMATIONS, ...options.confirmations };
  const explorer = `${options.publicUrl}/sandbox/devnet/tx/{tx}`;
  const init = ({ rebase = false }: { rebase?: boolean } = {}) => initDevnetChains(pool, options.blockMs, rebase);
  const keys = options.keys ?? (options.seed ? seedKeys(options.seed) : undefined);
  const signer: DevnetSigner | undefined = keys ? createDevnetSigner(keys, options.addresses) : undefined;
  const hotWallet = () => {
    if (!signer) throw new Error('this devnet has no hot wallet: it was created without the custody seed');
    return signer;
  };
  return {
    networks: NETWORKS,
    requiredConfirmations: (network) => confirmations[network],
    explorerUrl: () => explorer,
    // The devnet keeps transfers, not balances per address: there is nothing to set against the ledger.
    holdings: () => Promise.reject(new ChainUnsupportedError('the devnet keeps no on-chain balances')),
    ...createDevnetReader(pool, { explorer, confirmations }),
    ...createDevnetNode(pool, { hotWallet, addresses: options.addresses, init }),
    init,
    send: createFaucet(pool, { explorer, addresses: options.addresses, init }),
    refusalOf: (error) => (error instanceof DevnetError ? { problem: error.problem, message: error.message } : undefined),
  };
}

/** The faucet: a deposit from a fixed devnet-only key to any valid address. */
function createFaucet(pool: pg.Pool, context: { explorer: string; addresses: ChainAddressing; init: () => Promise<void> }): DevnetChain['send'] {
  const faucet = new Map<Network, Promise<string>>();
  const faucetAddress = (network: Network) => {
    let address = faucet.get(network);
    if (!address) {
      address = context.addresses.derive(mnemonicToSeedSync(FAUCET_MNEMONIC), network, 0);
      faucet.set(network, address);
    }
    return address;
  };
  return async ({ currency, toAddress, amount }) => {
    const { coin, address } = devnetTarget(context.addresses, currency, toAddress);
    let units: Units;
    try {
      units = unitsOf(parseAmount(amount, coin.decimals));
    } catch (error) {
      throw new DevnetError('BAD_AMOUNT', error instanceof AmountError ? error.message : 'bad amount');
    }
    if (units <= 0n) throw new DevnetError('BAD_AMOUNT', 'the amount must be above zero');
    const txHash = (coin.network === 'ETHEREUM' ? '0x' : '') + randomBytes(32).toString('hex');
    const from = await faucetAddress(coin.network);
    await context.init();
    const blockHeight = await insertDevnetTransfer(pool, { network: coin.network, txHash, currency, from, to: address, amount: units.toString() });
    if (blockHeight === undefined) throw new Error(`devnet ${coin.network} is not initialised`);
    return {
      network: coin.network,
      currency,
      txHash,
      outputIndex: 0,
      fromAddress: from,
      toAddress: address,
      amount: formatUnits(units, coin.decimals),
      blockHeight,
      explorerUrl: context.explorer.replace('{tx}', txHash),
    };
  };
}

/** The devnet among the registry's adapters (its faucet and explorer are served under /sandbox/devnet). */
export function isDevnet(adapter: ChainAdapter): adapter is DevnetChain {
  return 'send' in adapter && 'failNext' in adapter;
}
