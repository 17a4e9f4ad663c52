/**
 * Address shapes per network (SPEC §5), for the browser's instant check; the gateway also verifies checksums.
 */
import { NETWORKS, type Network } from './currencies.ts';

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';

/** Each network's accepted forms; Bitcoin lists main and test networks, as the spec asks. */
export const ADDRESS_PATTERNS: Record<Network, readonly RegExp[]> = {
  BITCOIN: [
    /^bc1[02-9ac-hj-np-z]{11,71}$/,
    /^BC1[02-9AC-HJ-NP-Z]{11,71}$/,
    new RegExp(`^[13]${BASE58}{25,34}$`),
    /^(?:tb1|bcrt1)[02-9ac-hj-np-z]{11,71}$/,
    new RegExp(`^[mn2]${BASE58}{25,34}$`),
  ],
  ETHEREUM: [/^0x[0-9a-fA-F]{40}$/],
  TRON: [new RegExp(`^T${BASE58}{33}$`)],
  LITECOIN: [/^ltc1[02-9ac-hj-np-z]{11,71}$/, /^LTC1[02-9AC-HJ-NP-Z]{11,71}$/, new RegExp(`^[LM3]${BASE58}{26,33}$`)],
  DOGECOIN: [new RegExp(`^D[5-9A-HJ-NP-U]${BASE58}{32}$`), new RegExp(`^[9A]${BASE58}{33}$`)],
  TON: [/^[UEk0][Qf][A-Za-z0-9_-]{46}$/, /^[UEk0][Qf][A-Za-z0-9+/]{46}$/, /^(?:-1|0):[0-9a-fA-F]{64}$/],
};

/** The Ethereum-style pattern is the default for networks without their own (SPEC §5). */
const DEFAULT_PATTERNS: readonly RegExp[] = ADDRESS_PATTERNS.ETHEREUM;

/** Does the address have the shape of one on `network`? 'ALL' accepts any network's form. */
export function isAddressShapeValid(network: Network | 'ALL' | string, address: string): boolean {
  const value = address.trim();
  if (network === 'ALL') return NETWORKS.some((n) => ADDRESS_PATTERNS[n].some((p) => p.test(value)));
  const patterns = (NETWORKS as readonly string[]).includes(network) ? ADDRESS_PATTERNS[network as Network] : DEFAULT_PATTERNS;
  return patterns.some((p) => p.test(value));
}

/** SPEC §9: the first part, dots, the last 4 characters. */
export function shortenAddress(address: string, head = 8): string {
  return address.length <= head + 7 ? address : `${address.slice(0, head)}...${address.slice(-4)}`;
}
