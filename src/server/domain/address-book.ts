/**
 * The address book (SPEC §3 address book entry, §5 add address, §7 address-book): named addresses per account and
 * network. Only adding and deleting exist. An address is trimmed, checked with its network's checksum and kept in
 * the network's canonical spelling, so the same address is never saved twice on one network; a TON address keeps
 * its bounce flag (`bookAddress`), so `EQ…` and `UQ…` of one wallet are two entries: two ways of sending to it.
 */
import type pg from 'pg';
import { isNetwork, type Network } from '../../lib/currencies.ts';
import type { ChainAddressing } from '../adapters/chains/port.ts';
import { bookAddress } from './withdrawals/rules.ts';
import { DomainError } from './errors.ts';
import type { addressBookEntries } from '../db/schema.ts';

/** SPEC §9: the address book is read as one page of 1000; an account keeps at most that many entries. */
export const ADDRESS_BOOK_LIMIT = 1000;
export const ADDRESS_BOOK_NAME_MAX = 64;

export type AddressBookCode = 'ADDRESS_BOOK_WRONG_ADDRESS' | 'ADDRESS_BOOK_UNKNOWN_NETWORK' | 'ADDRESS_BOOK_DUPLICATE' | 'ADDRESS_BOOK_FULL' | 'ADDRESS_BOOK_NOT_FOUND';

export class AddressBookError extends DomainError<AddressBookCode> {}

export type AddressBookEntry = { id: string; name: string; blockchain: Network; address: string; createdDate: string };

type Row = Pick<typeof addressBookEntries.$inferSelect, 'id' | 'name' | 'address' | 'createdAt'> & { blockchain: Network };
const COLUMNS = 'id, name, blockchain, address, created_at AS "createdAt"';

const toEntry = (row: Row): AddressBookEntry => ({ id: row.id, name: row.name, blockchain: row.blockchain, address: row.address, createdDate: row.createdAt.toISOString() });

/** `addresses` are the custody's address rules under CHAIN_ENV: an address of another chain environment is refused. */
export async function addAddress(pool: pg.Pool, account: string, input: { name: string; blockchain: string; address: string }, addresses: Pick<ChainAddressing, 'isValid'>): Promise<AddressBookEntry> {
  const network = input.blockchain.trim().toUpperCase();
  if (!isNetwork(network)) throw new AddressBookError('ADDRESS_BOOK_UNKNOWN_NETWORK', `${input.blockchain} is not a network this wallet knows`);
  const typed = input.address.trim();
  if (!addresses.isValid(network, typed)) throw new AddressBookError('ADDRESS_BOOK_WRONG_ADDRESS', 'Address format is wrong.');
  const address = bookAddress(network, typed);
  // The count and the insert in one statement: concurrent adds cannot pass the limit together by much (and a
  // race past it costs nothing but a few rows).
  const inserted = await pool.query<Row>(
    `INSERT INTO address_book_entries (wallet_account_id, name, blockchain, address)
     SELECT $1, $2, $3, $4 WHERE (SELECT count(*) FROM address_book_entries WHERE wallet_account_id = $1) < $5
     ON CONFLICT (wallet_account_id, blockchain, address) DO NOTHING
     RETURNING ${COLUMNS}`,
    [account, input.name.trim(), network, address, ADDRESS_BOOK_LIMIT],
  );
  const row = inserted.rows[0];
  if (row) return toEntry(row);
  const existing = await pool.query<Pick<Row, 'name'>>('SELECT name FROM address_book_entries WHERE wallet_account_id = $1 AND blockchain = $2 AND address = $3', [account, network, address]);
  if (existing.rows[0]) throw new AddressBookError('ADDRESS_BOOK_DUPLICATE', `This address is already in your address book as ${existing.rows[0].name}`);
  throw new AddressBookError('ADDRESS_BOOK_FULL', `The address book holds at most ${ADDRESS_BOOK_LIMIT} addresses`);
}

export async function listAddresses(pool: pg.Pool, account: string, page: { pageNumber: number; pageSize: number }): Promise<{ result: AddressBookEntry[]; total: number }> {
  const rows = await pool.query<Row & { total: string }>(
    `SELECT ${COLUMNS}, count(*) OVER () AS total FROM address_book_entries
      WHERE wallet_account_id = $1 ORDER BY lower(name), created_at LIMIT $2 OFFSET $3`,
    [account, page.pageSize, (page.pageNumber - 1) * page.pageSize],
  );
  return { result: rows.rows.map(toEntry), total: Number(rows.rows[0]?.total ?? 0) };
}

export async function getAddress(pool: pg.Pool, account: string, id: string): Promise<AddressBookEntry> {
  const found = await pool.query<Row>(`SELECT ${COLUMNS} FROM address_book_entries WHERE wallet_account_id = $1 AND id = $2`, [account, id]);
  const row = found.rows[0];
  if (!row) throw new AddressBookError('ADDRESS_BOOK_NOT_FOUND', 'No such address in your address book');
  return toEntry(row);
}

export async function deleteAddress(pool: pg.Pool, account: string, id: string): Promise<AddressBookEntry> {
  const deleted = await pool.query<Row>(`DELETE FROM address_book_entries WHERE wallet_account_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [account, id]);
  const row = deleted.rows[0];
  if (!row) throw new AddressBookError('ADDRESS_BOOK_NOT_FOUND', 'No such address in your address book');
  return toEntry(row);
}
