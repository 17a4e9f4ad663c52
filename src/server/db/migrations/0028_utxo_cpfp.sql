ALTER TABLE "utxo_transactions" ADD COLUMN "parent_tx" text;--> statement-breakpoint
ALTER TABLE "utxo_transactions" ADD COLUMN "fee_alerted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "utxo_transactions" ADD COLUMN "accepted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "utxo_transactions_cpfp" ON "utxo_transactions" USING btree ("network","parent_tx") WHERE "utxo_transactions"."parent_tx" IS NOT NULL;