CREATE TABLE "withdrawal_batches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"network" text NOT NULL,
	"size" integer NOT NULL,
	"tx_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"signed_at" timestamp with time zone,
	CONSTRAINT "withdrawal_batches_size" CHECK ("withdrawal_batches"."size" > 0)
);
--> statement-breakpoint
ALTER TABLE "utxo_transactions" ADD COLUMN "payments" jsonb;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "batch_id" uuid;--> statement-breakpoint
CREATE INDEX "withdrawal_batches_unsigned" ON "withdrawal_batches" USING btree ("network","created_at") WHERE "withdrawal_batches"."signed_at" IS NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_batch_id_withdrawal_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."withdrawal_batches"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "withdrawals_batch" ON "withdrawals" USING btree ("batch_id") WHERE "withdrawals"."batch_id" IS NOT NULL;