/**
 * The address book (SPEC §3 address book entry, §5 add address, §7 address-book): named addresses per account and
 * network. Only adding and deleting exist. An address is trimmed, checked with its network's checksum and kept in
 * the network's canonical spelling, so the same address is never saved twice on one network.
 */
import type pg from 'pg';
import { isNetwork, type Network } from '../../lib/currencies.ts';
import { isValidAddress } from './addresses.ts';
import { canonicalAddress } from './withdrawals/rules.ts';

/** SPEC §9: the address book is read as one page of 1000; an account keeps at most that many entries. */
export const ADDRESS_BOOK_LIMIT = 1000;
export const ADDRESS_BOOK_NAME_MAX = 64;

export type AddressBookProblem = 'WRONG_ADDRESS' | 'UNKNOWN_NETWORK' | 'DUPLICATE' | 'FULL' | 'NOT_FOUND';

export class AddressBookError extends Error {
  readonly problem: AddressBookProblem;
  constructor(problem: AddressBookProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

export type AddressBookEntry = { id: string; name: string; blockchain: Network; address: string; createdDate: string };

type Row = { id: string; name: string; blockchain: Network; address: string; created_at: Date };

const toEntry = (row: Row): AddressBookEntry => ({ id: row.id, name: row.name, blockchain: row.blockchain, address: row.address, createdDate: row.created_at.toISOString() });

export async function addAddress(pool: pg.Pool, account: string, input: { name: string; blockchain: string; address: string }): Promise<AddressBookEntry> {
  const network = input.blockchain.trim().toUpperCase();
  if (!isNetwork(network)) throw new AddressBookError('UNKNOWN_NETWORK', `${input.blockchain} is not a network this wallet knows`);
  const typed = input.address.trim();
  if (!isValidAddress(network, typed)) throw new AddressBookError('WRONG_ADDRESS', 'Address format is wrong.');
  const address = canonicalAddress(network, typed);
  // The count and the insert in one statement: concurrent adds cannot pass the limit together by much (and a
  // race past it costs nothing but a few rows).
  const inserted = await pool.query<Row>(
    `INSERT INTO address_book_entries (wallet_account_id, name, blockchain, address)
     SELECT $1, $2, $3, $4 WHERE (SELECT count(*) FROM address_book_entries WHERE wallet_account_id = $1) < $5
     ON CONFLICT (wallet_account_id, blockchain, address) DO NOTHING
     RETURNING id, name, blockchain, address, created_at`,
    [account, input.name.trim(), network, address, ADDRESS_BOOK_LIMIT],
  );
  const row = inserted.rows[0];
  if (row) return toEntry(row);
  const existing = await pool.query<{ name: string }>('SELECT name FROM address_book_entries WHERE wallet_account_id = $1 AND blockchain = $2 AND address = $3', [account, network, address]);
  if (existing.rows[0]) throw new AddressBookError('DUPLICATE', `This address is already in your address book as ${existing.rows[0].name}`);
  throw new AddressBookError('FULL', `The address book holds at most ${ADDRESS_BOOK_LIMIT} addresses`);
}

export async function listAddresses(pool: pg.Pool, account: string, page: { pageNumber: number; pageSize: number }): Promise<{ result: AddressBookEntry[]; total: number }> {
  const rows = await pool.query<Row & { total: string }>(
    `SELECT id, name, blockchain, address, created_at, count(*) OVER () AS total FROM address_book_entries
      WHERE wallet_account_id = $1 ORDER BY lower(name), created_at LIMIT $2 OFFSET $3`,
    [account, page.pageSize, (page.pageNumber - 1) * page.pageSize],
  );
  return { result: rows.rows.map(toEntry), total: Number(rows.rows[0]?.total ?? 0) };
}

export async function getAddress(pool: pg.Pool, account: string, id: string): Promise<AddressBookEntry> {
  const found = await pool.query<Row>('SELECT id, name, blockchain, address, created_at FROM address_book_entries WHERE wallet_account_id = $1 AND id = $2', [account, id]);
  const row = found.rows[0];
  if (!row) throw new AddressBookError('NOT_FOUND', 'No such address in your address book');
  return toEntry(row);
}

export async function deleteAddress(pool: pg.Pool, account: string, id: string): Promise<AddressBookEntry> {
  const deleted = await pool.query<Row>('DELETE FROM address_book_entries WHERE wallet_account_id = $1 AND id = $2 RETURNING id, name, blockchain, address, created_at', [account, id]);
  const row = deleted.rows[0];
  if (!row) throw new AddressBookError('NOT_FOUND', 'No such address in your address book');
  return toEntry(row);
}
