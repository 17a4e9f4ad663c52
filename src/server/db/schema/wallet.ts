import { sql } from 'drizzle-orm';
import { index, integer, numeric, pgTable, primaryKey, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { walletAccounts } from './users.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/** The assets an account shows (SPEC §7 account currency): archiving hides one, the money stays in the ledger. */
export const accountAssets = pgTable(
  'account_assets',
  {
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'cascade' }),
    currency: text('currency').notNull(),
    archivedAt: timestamp('archived_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.walletAccountId, t.currency] })],
);

/** Each wallet account's HD derivation index, handed out in sequence; the seed itself is never stored. */
export const walletAccountKeys = pgTable('wallet_account_keys', {
  walletAccountId: uuid('wallet_account_id')
    .primaryKey()
    .references(() => walletAccounts.id, { onDelete: 'restrict' }),
  derivationIndex: integer('derivation_index').notNull().unique().generatedAlwaysAsIdentity({ startWith: 0, minValue: 0 }),
  seedFingerprint: text('seed_fingerprint').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** A deposit address of an account on a network (tokens share it); deposits are matched through it. */
export const depositAddresses = pgTable(
  'deposit_addresses',
  {
    network: text('network').notNull(),
    address: text('address').notNull(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    derivationIndex: integer('derivation_index').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.network, t.address] }), unique('deposit_addresses_account_network').on(t.walletAccountId, t.network)],
);

/**
 * What a user sees in the history (SPEC §3 Transaction), one row per deposit, withdrawal, swap, buy or sell;
 * `reference` names the row of the feature behind it ('deposit:<id>', 'withdrawal:<id>'...). Amounts in atomic units.
 */
export const walletTransactions = pgTable(
  'wallet_transactions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    transactionType: text('transaction_type', { enum: ['DEPOSIT', 'WITHDRAWAL', 'EXCHANGE', 'C2F', 'F2C', 'FIAT_DEPOSIT'] }).notNull(),
    direction: text('direction', { enum: ['DEPOSIT', 'WITHDRAWAL'] }).notNull(),
    state: text('state', { enum: ['IN_PROGRESS', 'COMPLETED', 'FAILED'] }).notNull(),
    currency: text('currency').notNull(),
    amount: units('amount').notNull(),
    fee: units('fee').notNull().default('0'),
    feeCurrency: text('fee_currency'),
    network: text('network'),
    fromAddress: text('from_address'),
    toAddress: text('to_address'),
    contact: text('contact'),
    senderName: text('sender_name'),
    recipientName: text('recipient_name'),
    hash: text('hash'),
    accountFromType: text('account_from_type', { enum: ['B2C', 'B2B'] }),
    accountToType: text('account_to_type', { enum: ['B2C', 'B2B'] }),
    fromCurrency: text('from_currency'),
    toCurrency: text('to_currency'),
    fromAmount: units('from_amount'),
    toAmount: units('to_amount'),
    fiatCurrency: text('fiat_currency'),
    fiatAmount: units('fiat_amount'),
    exchangeRate: text('exchange_rate'),
    reference: text('reference').notNull().unique(),
    failureReason: text('failure_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [index('wallet_transactions_account_created').on(t.walletAccountId, sql`${t.createdAt} DESC`)],
);
