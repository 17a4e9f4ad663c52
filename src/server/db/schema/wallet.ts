import { sql } from 'drizzle-orm';
import { index, integer, numeric, pgTable, primaryKey, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { walletAccounts } from './users.ts';
import { operationId } from './ids.ts';

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

/**
 * Public keys the signer derived ahead of need where no extended public key derives them (TON: SLIP-10 ed25519,
 * hardened at every level): the gateway and the worker read a derivation's key here, and ask the signer to top the
 * pool up (a batch past the highest index in use) when one is missing. Public, never a private key.
 */
export const custodyPublicKeys = pgTable(
  'custody_public_keys',
  {
    network: text('network').notNull(),
    derivationIndex: integer('derivation_index').notNull(),
    /** Hex of the raw public key (ed25519: 32 bytes). */
    publicKey: text('public_key').notNull(),
    seedFingerprint: text('seed_fingerprint').notNull(),
    /** The signer's HMAC over the row (signer/keys.ts), checked before an address is derived; null on rows from before it. */
    mac: text('mac'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.network, t.derivationIndex] })],
);

/**
 * What the signer signed out, per payment (a withdrawal's id), for its daily cap (SIGNER_DAILY_MAX,
 * domain/signing-cap.ts): recorded before the signature, once per reference, so the same order asked again is not
 * counted twice and a signature that failed after it still counts (the cap errs towards signing less).
 */
export const signerSignedPayments = pgTable(
  'signer_signed_payments',
  {
    reference: text('reference').primaryKey(),
    network: text('network').notNull(),
    currency: text('currency').notNull(),
    amount: numeric('amount', { precision: 78, scale: 0 }).notNull(),
    signedAt: timestamp('signed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('signer_signed_payments_currency_time').on(t.currency, t.signedAt)],
);

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
    /** SECRETS_KEY's keyed hash over network, address, account and index (domain/deposit-address-guard.ts); null on rows made before it. */
    mac: text('mac'),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.address] }),
    unique('deposit_addresses_account_network').on(t.walletAccountId, t.network),
    // The block scans' in-memory address sets read only the rows added since their last read (evm/context.ts, ton/reader.ts).
    index('deposit_addresses_network_created_at').on(t.network, t.createdAt),
  ],
);

/**
 * What a user sees in the history (SPEC §3 Transaction), one row per deposit, withdrawal, swap, buy or sell;
 * `reference` names the row of the feature behind it ('deposit:<id>', 'withdrawal:<id>'...). Amounts in atomic units.
 */
export const walletTransactions = pgTable(
  'wallet_transactions',
  {
    id: operationId(),
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
