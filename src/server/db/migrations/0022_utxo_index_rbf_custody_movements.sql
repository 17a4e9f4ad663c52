CREATE TABLE "custody_movements" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"idempotency_key" text NOT NULL,
	"network" text NOT NULL,
	"currency" text NOT NULL,
	"to_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"state" text NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"confirmations" integer DEFAULT 0 NOT NULL,
	"network_fee" numeric(78, 0),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone,
	CONSTRAINT "custody_movements_idempotency" UNIQUE("idempotency_key"),
	CONSTRAINT "custody_movements_amount" CHECK ("custody_movements"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "utxo_change_addresses" (
	"network" text NOT NULL,
	"derivation_index" integer NOT NULL,
	"address" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "utxo_change_addresses_network_derivation_index_pk" PRIMARY KEY("network","derivation_index"),
	CONSTRAINT "utxo_change_addresses_address" UNIQUE("network","address")
);
--> statement-breakpoint
CREATE TABLE "utxo_outputs" (
	"network" text NOT NULL,
	"tx_hash" text NOT NULL,
	"vout" integer NOT NULL,
	"address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"key_chain" integer NOT NULL,
	"key_index" integer NOT NULL,
	"block_height" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"spent_tx" text,
	"spent_height" bigint,
	"reserved_by" text,
	CONSTRAINT "utxo_outputs_network_tx_hash_vout_pk" PRIMARY KEY("network","tx_hash","vout")
);
--> statement-breakpoint
CREATE TABLE "utxo_transactions" (
	"reference" text NOT NULL,
	"attempt" integer NOT NULL,
	"network" text NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"to_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"fee" numeric(78, 0) NOT NULL,
	"fee_rate" numeric(78, 0) NOT NULL,
	"inputs" text[] NOT NULL,
	"change_index" integer,
	"released_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "utxo_transactions_reference_attempt_pk" PRIMARY KEY("reference","attempt"),
	CONSTRAINT "utxo_transactions_hash" UNIQUE("network","tx_hash")
);
--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "replaced_tx_hashes" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "broadcast_height" bigint;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "network_fee" numeric(78, 0);--> statement-breakpoint
CREATE INDEX "utxo_outputs_unspent" ON "utxo_outputs" USING btree ("network","block_height") WHERE "utxo_outputs"."spent_tx" IS NULL;--> statement-breakpoint
CREATE INDEX "utxo_outputs_reserved" ON "utxo_outputs" USING btree ("reserved_by");