/** SPEC §5 address rules, on the server: the network's format with its checksum, the block list, and who owns it. */
import type { CoinMeta } from '../../../lib/currencies.ts';
import type { ChainAddressing, WithdrawalChainPort } from '../../adapters/chains/port.ts';
import type { Queryable } from '../ledger.ts';
import type { AddressWarning } from '../../../lib/wire/withdrawals.ts';
import { bookAddress, canonicalAddress, isBounceableTonAddress, type AccountType, type CheckedAddress } from './rules.ts';

export type AddressChecker = (db: Queryable, account: string, coin: CoinMeta, rawAddress: string) => Promise<CheckedAddress>;

export function createAddressChecker(deps: { chain: Pick<WithdrawalChainPort, 'hotWalletAddress' | 'accountState'>; addresses: Pick<ChainAddressing, 'isValid'>; blockedAddresses: readonly string[] }): AddressChecker {
  /** TON: a bounceable address of a wallet the chain shows undeployed would send the money back (an unknown state warns nothing). */
  const warningOf = async (network: CoinMeta['network'], address: string): Promise<{ warning?: AddressWarning }> => {
    if (network !== 'TON' || !isBounceableTonAddress(address) || !deps.chain.accountState) return {};
    const state = await deps.chain.accountState(network, address).catch(() => 'UNKNOWN' as const);
    return state === 'UNINITIALISED' ? { warning: 'BOUNCEABLE_UNINITIALISED' } : {};
  };
  return async (db, account, coin, rawAddress) => {
    const network = coin.network;
    const typed = rawAddress.trim();
    const base = { belongsToSameUser: false, accountType: 'B2C' as AccountType, internal: false, network, recipientName: null, saved: false, recipientAccountId: null, senderType: 'B2C' as AccountType, senderName: null };
    const isValidAddress = deps.addresses.isValid;
    if (!isValidAddress(network, typed)) return { ...base, checkResult: 'INVALID', address: typed };
    const address = canonicalAddress(network, typed);
    const blocked = deps.blockedAddresses.some((b) => isValidAddress(network, b) && canonicalAddress(network, b) === address);
    if (blocked) return { ...base, checkResult: 'BLOCKED', address: typed };
    if (address === (await deps.chain.hotWalletAddress(network))) return { ...base, checkResult: 'NOT_USED', address: typed };
    // Computed columns of five tables, not a row of one: typed here.
    const found = await db.query<{ owner: string | null; owner_user: string | null; sender_user: string | null; owner_business: string | null; sender_business: string | null; saved_name: string | null }>(
      `SELECT d.wallet_account_id AS owner, a.user_id AS owner_user, s.user_id AS sender_user, ob.name AS owner_business, sb.name AS sender_business,
              (SELECT e.name FROM address_book_entries e WHERE e.wallet_account_id = $3 AND e.blockchain = $1 AND e.address IN ($2, $4, $5) LIMIT 1) AS saved_name
         FROM wallet_accounts s
         LEFT JOIN deposit_addresses d ON d.network = $1 AND d.address = $2
         LEFT JOIN wallet_accounts a ON a.id = d.wallet_account_id
         LEFT JOIN business_accounts ob ON ob.wallet_account_id = d.wallet_account_id
         LEFT JOIN business_accounts sb ON sb.wallet_account_id = s.id
        WHERE s.id = $3`,
      [network, address, account, typed, bookAddress(network, typed)],
    );
    const row = found.rows[0];
    const senderType: AccountType = row?.sender_business ? 'B2B' : 'B2C';
    const common = { ...base, checkResult: 'VALID' as const, saved: row?.saved_name != null, senderType, senderName: row?.sender_business ?? null };
    if (!row?.owner) return { ...common, address: typed, recipientName: row?.saved_name ?? null, ...(await warningOf(network, typed)) };
    return {
      ...common,
      address,
      internal: true,
      belongsToSameUser: row.owner_user === row.sender_user,
      accountType: row.owner_business ? 'B2B' : 'B2C',
      recipientName: row.saved_name ?? row.owner_business,
      recipientAccountId: row.owner,
    };
  };
}
