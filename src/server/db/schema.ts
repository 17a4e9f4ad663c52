// The whole Drizzle schema: one file per area under ./schema, gathered here for the client and drizzle-kit.
export * from './schema/settings.ts';
export * from './schema/users.ts';
export * from './schema/idp.ts';
export * from './schema/mail.ts';
export * from './schema/ledger.ts';
export * from './schema/wallet.ts';
export * from './schema/chains.ts';
export * from './schema/jobs.ts';
export * from './schema/pincode.ts';
export * from './schema/swaps.ts';
export * from './schema/telegram.ts';
export * from './schema/sell.ts';
export * from './schema/withdrawals.ts';
export * from './schema/webhooks.ts';
export * from './schema/buy.ts';
