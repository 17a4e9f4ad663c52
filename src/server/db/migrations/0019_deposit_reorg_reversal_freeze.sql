ALTER TABLE "chain_deposits" ADD COLUMN "in_doubt_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "wallet_accounts" ADD COLUMN "withdrawals_frozen_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "wallet_accounts" ADD COLUMN "withdrawals_frozen_reason" text;--> statement-breakpoint
CREATE INDEX "chain_deposits_in_doubt" ON "chain_deposits" USING btree ("network","block_height") WHERE "chain_deposits"."in_doubt_since" IS NOT NULL OR "chain_deposits"."state" = 'REVERSAL_DUE';