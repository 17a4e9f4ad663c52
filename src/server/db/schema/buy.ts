import { sql } from 'drizzle-orm';
import { index, jsonb, numeric, pgTable, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { walletAccounts } from './users.ts';
import { walletTransactions } from './wallet.ts';
import { chainDeposits } from './chains.ts';
import type { QuotePrices } from './market.ts';
import { operationId } from './ids.ts';

const units = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * One payment method of a buy quote, as fixed by the quote (SPEC §3 payment method). An on-ramp's item is an
 * estimate: `estimate` atomic units for `fiatCents`, with the provider's `fees` (decimal strings in the fiat) inside.
 */
export type BuyQuoteItem = {
  itemId: string;
  code: string;
  name: string;
  rate: string;
  minLimit: string;
  maxLimit: string;
  estimate?: string;
  fiatCents?: string;
  fees?: { provider: string; network: string; partner: string };
};

/** A buy quote (SPEC §3 rate quote, `fixedRateId`): fiat per coin per method, good until `expiresAt`. */
export const buyRateQuotes = pgTable('buy_rate_quotes', {
  id: operationId(),
  walletAccountId: uuid('wallet_account_id')
    .notNull()
    .references(() => walletAccounts.id, { onDelete: 'cascade' }),
  currency: text('currency').notNull(),
  fiatCurrency: text('fiat_currency').notNull(),
  items: jsonb('items').$type<BuyQuoteItem[]>().notNull(),
  /** The prices and sources the quote was made from; NULL on older rows. */
  prices: jsonb('prices').$type<QuotePrices>(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A card purchase (SPEC §3 buy order). NEW until confirmed; PENDING while the provider's page takes the payment;
 * COMPLETED credited the crypto from card settlement (one ledger entry); FAILED declined or not paid in time;
 * EXPIRED never confirmed. One order per (account, idempotency key). An on-ramp's order (delivery CHAIN) is
 * credited by nothing of its own: the provider sends the coins to `wallet_address`, and the chain deposit that
 * brings them (`chain_deposit_id`, once linked) is credited as any deposit; the order completes with that credit.
 */
export const buyOrders = pgTable(
  'buy_orders',
  {
    id: operationId(),
    walletAccountId: uuid('wallet_account_id')
      .notNull()
      .references(() => walletAccounts.id, { onDelete: 'restrict' }),
    idempotencyKey: text('idempotency_key').notNull(),
    requestHash: text('request_hash').notNull(),
    rateId: uuid('rate_id').notNull(),
    itemId: text('item_id').notNull(),
    methodCode: text('method_code').notNull(),
    currency: text('currency').notNull(),
    amount: units('amount').notNull(),
    fiatCurrency: text('fiat_currency').notNull(),
    fiatAmount: units('fiat_amount').notNull(),
    rate: text('rate').notNull(),
    description: text('description').notNull(),
    returnUrl: text('return_url').notNull(),
    state: text('state', { enum: ['NEW', 'PENDING', 'COMPLETED', 'FAILED', 'EXPIRED'] }).notNull().default('NEW'),
    providerPaymentId: text('provider_payment_id'),
    redirectUrl: text('redirect_url'),
    failureReason: text('failure_reason'),
    walletTransactionId: uuid('wallet_transaction_id').references(() => walletTransactions.id),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    /** LEDGER: credited from card settlement when paid (an acquirer); CHAIN: an on-ramp sends the coins on chain. */
    delivery: text('delivery', { enum: ['LEDGER', 'CHAIN'] }).notNull().default('LEDGER'),
    /** The deposit address the on-ramp was told to pay to. */
    walletAddress: text('wallet_address'),
    /** The on-ramp's newest status of its transaction: it only moves forward, whatever order its webhooks come in. */
    providerStatus: text('provider_status'),
    /** The hash of the on-ramp's transaction that sends the coins, once it reported one. */
    providerTxHash: text('provider_tx_hash'),
    /** The coins the on-ramp reported sending (atomic units), once it did. */
    providerAmount: units('provider_amount'),
    /** The chain deposit that brought the coins: one purchase, one deposit, one history item. */
    chainDepositId: uuid('chain_deposit_id').references(() => chainDeposits.id),
  },
  (t) => [
    unique('buy_orders_idempotency').on(t.walletAccountId, t.idempotencyKey),
    index('buy_orders_open').on(t.expiresAt).where(sql`${t.state} IN ('NEW', 'PENDING')`),
    unique('buy_orders_chain_deposit').on(t.chainDepositId),
    index('buy_orders_awaiting_coins').on(t.walletAccountId, t.currency).where(sql`${t.delivery} = 'CHAIN' AND ${t.state} = 'PENDING'`),
  ],
);

/** Every card provider event the gateway took, by the provider's event id: each is handled once. */
export const cardWebhookEvents = pgTable('card_webhook_events', {
  eventId: text('event_id').primaryKey(),
  paymentId: text('payment_id').notNull(),
  orderId: uuid('order_id'),
  status: text('status').notNull(),
  outcome: text('outcome').notNull(),
  receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
});

/** The embedded card provider's own payments (its side of the world, never read by the gateway's domain). */
export const cardSandboxPayments = pgTable(
  'card_sandbox_payments',
  {
    id: operationId(),
    reference: text('reference').notNull(),
    amount: units('amount').notNull(),
    currency: text('currency').notNull(),
    description: text('description').notNull(),
    returnUrl: text('return_url').notNull(),
    customerEmail: text('customer_email'),
    status: text('status', { enum: ['PENDING', 'REQUIRES_ACTION', 'SUCCEEDED', 'FAILED', 'CANCELLED'] }).notNull().default('PENDING'),
    cardLast4: text('card_last4'),
    failureReason: text('failure_reason'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('card_sandbox_payments_reference').on(t.reference)],
);
