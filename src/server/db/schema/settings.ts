import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Small named values the server keeps for itself (generated keys, one-time setup markers). */
export const appSetting = pgTable('app_setting', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
