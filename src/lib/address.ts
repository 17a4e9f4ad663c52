/**
 * Address shapes per network (SPEC §5), for the browser's instant check; the gateway also verifies checksums.
 * The forms follow CHAIN_ENV (the gateway announces it in GET /api/client-config as `chainEnv`): mainnet, testnet
 * and regtest addresses are each valid only on their own chain.
 */
import { NETWORKS, type ChainEnv, type Network } from './currencies.ts';

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';

/** A bech32 address with human-readable part `hrp`: all lower or all upper case (BIP173 refuses mixed case). */
const bech32 = (hrp: string): RegExp[] => [new RegExp(`^${hrp}1[02-9ac-hj-np-z]{11,71}$`), new RegExp(`^${hrp.toUpperCase()}1[02-9AC-HJ-NP-Z]{11,71}$`)];
const base58 = (firstCharacters: string, length = '{25,34}'): RegExp => new RegExp(`^[${firstCharacters}]${BASE58}${length}$`);

const ACCOUNT_BASED = {
  ETHEREUM: [/^0x[0-9a-fA-F]{40}$/],
  TRON: [new RegExp(`^T${BASE58}{33}$`)],
} as const;
const TON_RAW = /^(?:-1|0):[0-9a-fA-F]{64}$/;
/** TON's user-friendly forms: the first character is the flags (U/E on mainnet, 0/k test-only), url-safe or not. */
const ton = (flags: string): RegExp[] => [new RegExp(`^[${flags}][Qf][A-Za-z0-9_-]{46}$`), new RegExp(`^[${flags}][Qf][A-Za-z0-9+/]{46}$`), TON_RAW];

/** Each network's accepted forms per CHAIN_ENV (Bitcoin: bc/tb/bcrt; Litecoin: ltc/tltc/rltc; Dogecoin's prefixes). */
export const ADDRESS_PATTERNS: Record<ChainEnv, Record<Network, readonly RegExp[]>> = {
  mainnet: {
    BITCOIN: [...bech32('bc'), base58('13')],
    ...ACCOUNT_BASED,
    LITECOIN: [...bech32('ltc'), base58('LM3', '{26,33}')],
    DOGECOIN: [new RegExp(`^D[5-9A-HJ-NP-U]${BASE58}{32}$`), base58('9A', '{33}')],
    TON: ton('UE'),
  },
  testnet: {
    BITCOIN: [...bech32('tb'), base58('mn2')],
    ...ACCOUNT_BASED,
    LITECOIN: [...bech32('tltc'), base58('mnQ2', '{26,33}')],
    // Dogecoin testnet: pubKeyHash 0x71 (n), scriptHash 0xc4 (2).
    DOGECOIN: [base58('n2', '{33}')],
    TON: ton('0k'),
  },
  regtest: {
    BITCOIN: [...bech32('bcrt'), base58('mn2')],
    ...ACCOUNT_BASED,
    LITECOIN: [...bech32('rltc'), base58('mnQ2', '{26,33}')],
    // Dogecoin regtest: pubKeyHash 0x6f (m, n; 0x71 in Dogecoin Core's development branch), scriptHash 0xc4 (2).
    DOGECOIN: [base58('mn2', '{33}')],
    TON: ton('0k'),
  },
};

/** Does the address have the shape of one on `network` under `env`? 'ALL' accepts any network's form. */
export function isAddressShapeValid(network: Network | 'ALL' | string, address: string, env: ChainEnv): boolean {
  const value = address.trim();
  const patterns = ADDRESS_PATTERNS[env];
  if (network === 'ALL') return NETWORKS.some((n) => patterns[n].some((p) => p.test(value)));
  // The Ethereum-style pattern is the default for networks without their own (SPEC §5).
  const forms = (NETWORKS as readonly string[]).includes(network) ? patterns[network as Network] : patterns.ETHEREUM;
  return forms.some((p) => p.test(value));
}

/** SPEC §9: the first part, dots, the last 4 characters. */
export function shortenAddress(address: string, head = 8): string {
  return address.length <= head + 7 ? address : `${address.slice(0, head)}...${address.slice(-4)}`;
}

/** One group of an address as the wallet sets it, with the characters a reader checks emphasised. */
export type AddressGroup = { text: string; strong: boolean }[];

/**
 * An address in groups of four with its first and last four characters emphasised, each a group of its own (issue 33
 * item 4), as MyTonWallet and Telegram Wallet set them: those are what a user compares, and what an address made to
 * look alike imitates. Where the length is not a multiple of four the group before the last is the shorter one.
 * `short` keeps SPEC §9's shortening (the first 8 characters, dots, the last 4) in the same groups. The characters are
 * never changed: joined, the groups (and the dots) are the address or its shortening.
 */
export function addressGroups(address: string, short = false): AddressGroup[] {
  if (address.length <= 8) return [[{ text: address, strong: true }]];
  const head: AddressGroup = [{ text: address.slice(0, 4), strong: true }];
  const tail: AddressGroup = [{ text: address.slice(-4), strong: true }];
  if (short && shortenAddress(address) !== address) return [head, [{ text: address.slice(4, 8), strong: false }], [{ text: '...', strong: false }], tail];
  const middle = address.slice(4, -4);
  const groups = Array.from({ length: Math.ceil(middle.length / 4) }, (_, index): AddressGroup => [{ text: middle.slice(index * 4, index * 4 + 4), strong: false }]);
  return [head, ...groups, tail];
}
