/**
 * Address poisoning (issue 36 item 3): whether an address typed to send to or to save looks like one of the account's
 * own addresses without being it (lib/address-lookalike.ts), or only ever sent the account dust. Only the account's
 * own address book, withdrawals and deposits are read: nothing of another user's.
 */
import { Address as TonAddress } from '@ton/core';
import { unitsFromRow } from '../db/amounts.ts';
import { parseDecimal } from '../../lib/amount.ts';
import { lookalikeOf, sameAddress } from '../../lib/address-lookalike.ts';
import { findCoin, type Network } from '../../lib/currencies.ts';
import type { AddressCaution } from '../../lib/wire/withdrawals.ts';
import type { ChainAddressing } from '../adapters/chains/port.ts';
import type { Queryable } from './ledger.ts';
import { canonicalAddress } from './withdrawals/rules.ts';

export type { AddressCaution };

/**
 * Dust per asset: a deposit below this (or one below MIN_DEPOSIT, never credited) is the kind poisoners send, a
 * fraction of a network fee or a few cents. A coin not listed has no dust but what MIN_DEPOSIT refuses.
 */
export const DUST: Readonly<Record<string, string>> = { BTC: '0.00001', LTC: '0.0001', DOGE: '1', ETH: '0.00001', TRX: '1', TON: '0.01', USDT: '0.1', USDC: '0.1' };

/** Atomic units below which a deposit of `currency` is dust (0 for a coin without a threshold). */
export function dustLimit(currency: string): bigint {
  const coin = findCoin(currency);
  const limit = coin ? DUST[coin.baseCurrency] : undefined;
  return coin && limit ? parseDecimal(limit, coin.decimals) : 0n;
}

/** At most this many of the account's addresses on a network are compared (the most recent first). */
const KNOWN_LIMIT = 5000;

/**
 * The spelling compared: the network's canonical one (lower-case bech32, checksummed hex), and a TON address with
 * the bounce and test flags of `like` (the typed one), since its user-friendly form's ends change with them.
 */
function spelling(network: Network, address: string, like?: string): string {
  if (network !== 'TON') return canonicalAddress(network, address);
  try {
    const flags = like && TonAddress.isFriendly(like) ? TonAddress.parseFriendly(like) : { isBounceable: true, isTestOnly: false };
    const parsed = TonAddress.isFriendly(address) ? TonAddress.parseFriendly(address).address : TonAddress.parse(address);
    return parsed.toString({ bounceable: flags.isBounceable, testOnly: flags.isTestOnly, urlSafe: true });
  } catch {
    return address;
  }
}

type KnownRow = { address: string; trusted: boolean; currency: string | null; largest: string | null };

/** Why `typed` on `network` deserves a warning for `account`, or null; an address the network refuses gets none. */
export async function addressCaution(db: Queryable, account: string, network: Network, typed: string, addresses: Pick<ChainAddressing, 'isValid'>): Promise<AddressCaution | null> {
  const raw = typed.trim();
  if (!addresses.isValid(network, raw)) return null;
  // Per address and currency: whether the account chose it (saved it, sent to it), and the largest deposit from it
  // that was not refused as below MIN_DEPOSIT (null: none was).
  const rows = await db.query<KnownRow>(
    `SELECT address, bool_or(trusted) AS trusted, currency, max(amount) FILTER (WHERE state <> 'BELOW_MINIMUM')::text AS largest, max(at) AS last
       FROM (SELECT address, true AS trusted, NULL::text AS currency, NULL::numeric AS amount, NULL::text AS state, created_at AS at
               FROM address_book_entries WHERE wallet_account_id = $1 AND blockchain = $2
             UNION ALL
             SELECT to_address, true, NULL, NULL, NULL, created_at FROM withdrawals WHERE wallet_account_id = $1 AND network = $2
             UNION ALL
             SELECT from_address, false, currency, amount, state, detected_at FROM chain_deposits
              WHERE wallet_account_id = $1 AND network = $2 AND from_address IS NOT NULL) known
      GROUP BY address, currency ORDER BY last DESC LIMIT $3`,
    [account, network, KNOWN_LIMIT],
  );
  // An address is trusted when the account chose it or received more than dust from it in any currency.
  const seen = new Map<string, { trusted: boolean }>();
  for (const row of rows.rows) {
    const address = spelling(network, row.address, raw);
    const trusted = row.trusted || (row.currency !== null && row.largest !== null && unitsFromRow(row.largest, 'largest') >= dustLimit(row.currency));
    const entry = seen.get(address) ?? { trusted: false };
    seen.set(address, { trusted: entry.trusted || trusted });
  }
  const own = spelling(network, raw, raw);
  const trusted = [...seen].filter(([, entry]) => entry.trusted).map(([address]) => address);
  const similar = lookalikeOf(own, trusted);
  if (similar) return { kind: 'LOOKALIKE', similarTo: similar };
  const typedEntry = [...seen].find(([address]) => sameAddress(address, own));
  if (typedEntry && !typedEntry[1].trusted) return { kind: 'DUST_ONLY' };
  return null;
}
