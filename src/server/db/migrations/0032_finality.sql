DROP INDEX "chain_deposits_in_doubt";--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD COLUMN "holds" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "custody_movements" ADD COLUMN "block_height" bigint;--> statement-breakpoint
ALTER TABLE "custody_movements" ADD COLUMN "in_doubt_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "custody_movements" ADD COLUMN "reopened" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sweeps" ADD COLUMN "block_height" bigint;--> statement-breakpoint
ALTER TABLE "sweeps" ADD COLUMN "in_doubt_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sweeps" ADD COLUMN "reopened" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "block_height" bigint;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "in_doubt_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "reopened" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "withdrawals_in_doubt" ON "withdrawals" USING btree ("network") WHERE "withdrawals"."in_doubt_since" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "chain_deposits_in_doubt" ON "chain_deposits" USING btree ("network","block_height") WHERE "chain_deposits"."in_doubt_since" IS NOT NULL OR "chain_deposits"."state" IN ('REVERSAL_DUE', 'HELD');