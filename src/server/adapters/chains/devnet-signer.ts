/**
 * The devnet's hot wallet: one key per network derived from the custody's HD seed, signing a devnet transaction.
 *
 * Honest scope: the devnet has no UTXOs, nonces or fee markets, so its "transaction" is a deterministic payload
 * (network, currency, from, to, amount, the withdrawal's id) signed with the network's own curve (secp256k1 for
 * Bitcoin, Litecoin, Dogecoin, Ethereum and Tron; ed25519 for TON), and its hash is sha256 of the raw bytes. A real
 * network's adapter builds the chain's native transaction instead (a PSBT with coin selection through
 * @scure/btc-signer, an EIP-1559 transaction with the account's nonce, a Tron protobuf, a TON wallet transfer with
 * its seqno), signs it with the same key, and its hash is that chain's transaction id. Either way the signed bytes
 * are deterministic per withdrawal and their hash is known before broadcasting, which is what exactly-once needs.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { sign, signVerify } from '@ton/crypto';
import type { WalletKeys } from '../keys/port.ts';
import { seedKeys } from '../keys/wallet-keys.ts';
import type { Network } from '../../../lib/currencies.ts';
import type { ChainAddressing, SignedWithdrawal, WithdrawalOrder } from './port.ts';

/** The hot wallet's derivation index on every network: the last one, far from the accounts' deposit indexes (0, 1, 2…). */
export const HOT_WALLET_INDEX = 0x7fffffff;

const PREFIX = 'devnet1:';

type HotKey = { address: string; sign: (digest: Uint8Array) => Uint8Array; verify: (digest: Uint8Array, signature: Uint8Array) => boolean };

export type DevnetPayload = { network: Network; currency: string; from: string; to: string; amount: string; reference: string };

export type DevnetSigner = {
  address(network: Network): Promise<string>;
  sign(order: WithdrawalOrder): Promise<SignedWithdrawal>;
  /** The payload of a raw transaction whose signature is the hot wallet's, or undefined. */
  verify(network: Network, rawTx: string): Promise<DevnetPayload | undefined>;
};

export function devnetTxHash(network: Network, rawTx: string): string {
  const hex = Buffer.from(sha256(new TextEncoder().encode(rawTx))).toString('hex');
  return network === 'ETHEREUM' ? `0x${hex}` : hex;
}

/**
 * `addresses` are the custody's derivation rules: the hot wallet's key comes from the same keys and paths as deposit
 * addresses. With public keys only (outside the signer) it verifies but cannot sign.
 */
export function createDevnetSigner(source: WalletKeys | Uint8Array, addresses: ChainAddressing): DevnetSigner {
  const custodyKeys = source instanceof Uint8Array ? seedKeys(source) : source;
  const keys = new Map<Network, Promise<HotKey>>();
  const keyOf = (network: Network): Promise<HotKey> => {
    let key = keys.get(network);
    if (!key) {
      key = derive(custodyKeys, network, addresses);
      keys.set(network, key);
    }
    return key;
  };

  return {
    address: async (network) => (await keyOf(network)).address,
    async sign(order) {
      const key = await keyOf(order.network);
      const payload: DevnetPayload = {
        network: order.network,
        currency: order.currency,
        from: key.address,
        to: order.toAddress,
        amount: order.amount.toString(),
        reference: order.reference,
      };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      const signature = Buffer.from(key.sign(sha256(new TextEncoder().encode(body)))).toString('hex');
      const rawTx = `${PREFIX}${body}.${signature}`;
      return { rawTx, txHash: devnetTxHash(order.network, rawTx), fromAddress: key.address };
    },
    async verify(network, rawTx) {
      if (!rawTx.startsWith(PREFIX)) return undefined;
      const [body = '', signature = ''] = rawTx.slice(PREFIX.length).split('.');
      if (!/^[0-9a-f]+$/.test(signature)) return undefined;
      const key = await keyOf(network);
      let payload: DevnetPayload;
      try {
        payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as DevnetPayload;
      } catch {
        return undefined;
      }
      if (payload.network !== network || payload.from !== key.address || !/^\d+$/.test(payload.amount)) return undefined;
      return key.verify(sha256(new TextEncoder().encode(body)), Buffer.from(signature, 'hex')) ? payload : undefined;
    },
  };
}

async function derive(keys: WalletKeys, network: Network, addresses: ChainAddressing): Promise<HotKey> {
  const address = await addresses.derive(keys, network, HOT_WALLET_INDEX);
  if (network === 'TON') {
    const pair = await keys.ed25519(HOT_WALLET_INDEX);
    return {
      address,
      sign: (digest) => sign(Buffer.from(digest), pair.secretKey),
      verify: (digest, signature) => signVerify(Buffer.from(digest), Buffer.from(signature), pair.publicKey),
    };
  }
  const key = keys.derive(addresses.path(network, HOT_WALLET_INDEX));
  return {
    address,
    sign: (digest) => key.sign(digest),
    verify: (digest, signature) => {
      try {
        return key.verify(digest, signature);
      } catch {
        return false;
      }
    },
  };
}
