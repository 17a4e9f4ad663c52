CREATE TABLE "tron_transactions" (
	"reference" text PRIMARY KEY NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"from_address" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"fee_estimate" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tron_transactions_tx_hash_unique" UNIQUE("tx_hash")
);
