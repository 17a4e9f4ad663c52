import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, numeric, pgTable, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import type { QuotePrices } from './market.ts';
import { walletAccounts } from './users.ts';
import { walletTransactions } from './wallet.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/** A sell rate quoted to an account (SPEC §3 sell rate): fiat per coin, good until `expiresAt`; an order fixes it by id. */
export const sellRateQuotes = pgTable('sell_rate_quotes', {
  id: operationId(),
  walletAccountId: uuid('wallet_account_id')
    .notNull()
    .references(() => walletAccounts.id, { onDelete: 'cascade' }),
  currency: text('currency').notNull(),
  fiatCurrency: text('fiat_currency').notNull(),
  /** Fiat per one coin, an exact decimal string. */
  rate: text('rate').notNull(),
  /** The prices and sources the rate was made from; NULL on older rows. */
  prices: jsonb('prices').$type<QuotePrices>(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A card saved for payouts (SPEC §3 saved card): the payout provider's token, the masked number and the bank.
 * The full card number is never stored anywhere in this database.
 */
export const sellSavedCards = pgTable(
  'sell_saved_cards',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'cascade' }),
    fiatCurrency: text('fiat_currency').notNull(),
    providerToken: text('provider_token').notNull(),
    maskedCard: text('masked_card').notNull(),
    bankCode: text('bank_code').notNull(),
    bankSystem: text('bank_system').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('sell_saved_cards_token').on(t.walletAccountId, t.fiatCurrency, t.providerToken)],
);

/**
 * A sell order (crypto → a bank card payout). PROCESSING holds the crypto; COMPLETED moved it to the payout
 * settlement account; FAILED gave it back. One order per (account, idempotency key).
 */
export const sellOrders = pgTable(
  'sell_orders',
  {
    id: operationId(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    idempotencyKey: text('idempotency_key').notNull(),
    /** SHA-256 of the request's meaning (never of the card number itself), to refuse a key reused for another order. */
    requestHash: text('request_hash').notNull(),
    currency: text('currency').notNull(),
    amount: units('amount').notNull(),
    fiatCurrency: text('fiat_currency').notNull(),
    fiatAmount: units('fiat_amount').notNull(),
    rate: text('rate').notNull(),
    rateId: uuid('rate_id').notNull(),
    providerToken: text('provider_token').notNull(),
    maskedCard: text('masked_card').notNull(),
    bankCode: text('bank_code').notNull(),
    bankSystem: text('bank_system').notNull(),
    savedCardId: uuid('saved_card_id').references(() => sellSavedCards.id, { onDelete: 'set null' }),
    state: text('state', { enum: ['PROCESSING', 'COMPLETED', 'FAILED'] }).notNull().default('PROCESSING'),
    providerPayoutId: text('provider_payout_id'),
    submitAttempts: integer('submit_attempts').notNull().default(0),
    failureReason: text('failure_reason'),
    walletTransactionId: uuid('wallet_transaction_id').references(() => walletTransactions.id),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    unique('sell_orders_idempotency').on(t.walletAccountId, t.idempotencyKey),
    index('sell_orders_unsubmitted').on(t.createdAt).where(sql`${t.state} = 'PROCESSING' AND ${t.providerPayoutId} IS NULL`),
  ],
);

/** The embedded sandbox bank's card vault: the token and what a bank keeps to show, never the full number. */
export const payoutSandboxCards = pgTable('payout_sandbox_cards', {
  token: text('token').primaryKey(),
  bin: text('bin').notNull(),
  last4: text('last4').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** The sandbox bank's payouts: paid (or declined) when due; the reports go out through the webhook outbox (webhooks.ts). */
export const payoutSandboxPayouts = pgTable(
  'payout_sandbox_payouts',
  {
    id: operationId(),
    reference: text('reference').notNull().unique(),
    token: text('token')
      .notNull()
      .references(() => payoutSandboxCards.token),
    amount: units('amount').notNull(),
    currency: text('currency').notNull(),
    status: text('status', { enum: ['PENDING', 'SUCCEEDED', 'FAILED'] }).notNull().default('PENDING'),
    reason: text('reason'),
    dueAt: timestamp('due_at', { withTimezone: true }).notNull(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('payout_sandbox_payouts_due').on(t.dueAt).where(sql`${t.status} = 'PENDING'`),
  ],
);
