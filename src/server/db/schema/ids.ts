import { sql } from 'drizzle-orm';
import { uuid } from 'drizzle-orm/pg-core';

/**
 * The id of a row made per operation (an order, a quote, a withdrawal, a history item, a delivery, a message): a
 * UUIDv7, whose first 48 bits are its creation time in milliseconds (`uuid_v7()`, migration 0045), so each new row's
 * key, and the keys made from it ('withdrawal:<id>', 'withdrawal:hold:<id>'), go to the end of their indexes. A random
 * id lands on a random leaf of an index of tens of millions of rows: on the million-user database that leaf is rarely
 * cached and, first touched since the last checkpoint, written whole to the WAL (a history item and a ledger entry
 * wrote 9 KiB of WAL with random keys, 1.6 KiB with time-ordered ones; README "The million-user bench"). The other 74
 * bits are random, so an id is no easier to guess; it tells when its row was made, which the row itself shows. Ids of
 * what a user keeps (the user, the account, the ledger account, a saved card, a contact) stay random.
 */
export const operationId = () => uuid('id').primaryKey().default(sql`uuid_v7()`);
