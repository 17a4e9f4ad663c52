CREATE TABLE "chain_cursors" (
	"network" text PRIMARY KEY NOT NULL,
	"position" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chain_deposits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"network" text NOT NULL,
	"tx_hash" text NOT NULL,
	"output_index" integer NOT NULL,
	"currency" text NOT NULL,
	"from_address" text,
	"to_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"wallet_transaction_id" uuid,
	"block_height" bigint,
	"confirmations" integer DEFAULT 0 NOT NULL,
	"confirmations_required" integer NOT NULL,
	"state" text DEFAULT 'PENDING' NOT NULL,
	"ledger_entry_id" bigint,
	"detected_at" timestamp with time zone DEFAULT now() NOT NULL,
	"credited_at" timestamp with time zone,
	CONSTRAINT "chain_deposits_output" UNIQUE("network","tx_hash","output_index")
);
--> statement-breakpoint
CREATE TABLE "devnet_chains" (
	"network" text PRIMARY KEY NOT NULL,
	"genesis_at" timestamp with time zone DEFAULT now() NOT NULL,
	"block_ms" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "devnet_transactions" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "devnet_transactions_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"network" text NOT NULL,
	"tx_hash" text NOT NULL,
	"output_index" integer NOT NULL,
	"currency" text NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"block_height" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "devnet_transactions_output" UNIQUE("network","tx_hash","output_index")
);
--> statement-breakpoint
CREATE TABLE "job_schedule" (
	"name" text PRIMARY KEY NOT NULL,
	"run_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_started_at" timestamp with time zone,
	"last_finished_at" timestamp with time zone,
	"last_error" text,
	"runs" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"code" text NOT NULL,
	"wallet_account_id" uuid,
	"allow_negative" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_accounts_code_unique" UNIQUE("code"),
	CONSTRAINT "ledger_accounts_wallet_account_id_unique" UNIQUE("wallet_account_id")
);
--> statement-breakpoint
CREATE TABLE "ledger_balances" (
	"ledger_account_id" uuid NOT NULL,
	"currency" text NOT NULL,
	"available" numeric(78, 0) DEFAULT '0' NOT NULL,
	"on_hold" numeric(78, 0) DEFAULT '0' NOT NULL,
	"allow_negative" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_balances_ledger_account_id_currency_pk" PRIMARY KEY("ledger_account_id","currency"),
	CONSTRAINT "ledger_balances_not_negative" CHECK ("ledger_balances"."allow_negative" OR ("ledger_balances"."available" >= 0 AND "ledger_balances"."on_hold" >= 0))
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ledger_entries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"idempotency_key" text NOT NULL,
	"kind" text NOT NULL,
	"reference" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_entries_idempotency_key_unique" UNIQUE("idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "ledger_postings" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ledger_postings_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"entry_id" bigint NOT NULL,
	"ledger_account_id" uuid NOT NULL,
	"currency" text NOT NULL,
	"bucket" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	CONSTRAINT "ledger_postings_not_zero" CHECK ("ledger_postings"."amount" <> 0)
);
--> statement-breakpoint
CREATE TABLE "account_assets" (
	"wallet_account_id" uuid NOT NULL,
	"currency" text NOT NULL,
	"archived_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_assets_wallet_account_id_currency_pk" PRIMARY KEY("wallet_account_id","currency")
);
--> statement-breakpoint
CREATE TABLE "deposit_addresses" (
	"network" text NOT NULL,
	"address" text NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"derivation_index" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposit_addresses_network_address_pk" PRIMARY KEY("network","address"),
	CONSTRAINT "deposit_addresses_account_network" UNIQUE("wallet_account_id","network")
);
--> statement-breakpoint
CREATE TABLE "wallet_account_keys" (
	"wallet_account_id" uuid PRIMARY KEY NOT NULL,
	"derivation_index" integer GENERATED ALWAYS AS IDENTITY (sequence name "wallet_account_keys_derivation_index_seq" INCREMENT BY 1 MINVALUE 0 MAXVALUE 2147483647 START WITH 0 CACHE 1),
	"seed_fingerprint" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "wallet_account_keys_derivation_index_unique" UNIQUE("derivation_index")
);
--> statement-breakpoint
CREATE TABLE "wallet_transactions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"transaction_type" text NOT NULL,
	"direction" text NOT NULL,
	"state" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"fee" numeric(78, 0) DEFAULT '0' NOT NULL,
	"fee_currency" text,
	"network" text,
	"from_address" text,
	"to_address" text,
	"contact" text,
	"sender_name" text,
	"recipient_name" text,
	"hash" text,
	"account_from_type" text,
	"account_to_type" text,
	"from_currency" text,
	"to_currency" text,
	"from_amount" numeric(78, 0),
	"to_amount" numeric(78, 0),
	"fiat_currency" text,
	"fiat_amount" numeric(78, 0),
	"exchange_rate" text,
	"reference" text NOT NULL,
	"failure_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "wallet_transactions_reference_unique" UNIQUE("reference")
);
--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_wallet_transaction_id_wallet_transactions_id_fk" FOREIGN KEY ("wallet_transaction_id") REFERENCES "public"."wallet_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_balances" ADD CONSTRAINT "ledger_balances_ledger_account_id_ledger_accounts_id_fk" FOREIGN KEY ("ledger_account_id") REFERENCES "public"."ledger_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_postings" ADD CONSTRAINT "ledger_postings_entry_id_ledger_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."ledger_entries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_postings" ADD CONSTRAINT "ledger_postings_ledger_account_id_ledger_accounts_id_fk" FOREIGN KEY ("ledger_account_id") REFERENCES "public"."ledger_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_assets" ADD CONSTRAINT "account_assets_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deposit_addresses" ADD CONSTRAINT "deposit_addresses_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_account_keys" ADD CONSTRAINT "wallet_account_keys_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chain_deposits_pending" ON "chain_deposits" USING btree ("detected_at") WHERE "chain_deposits"."state" = 'PENDING';--> statement-breakpoint
CREATE INDEX "devnet_transactions_to" ON "devnet_transactions" USING btree ("network","to_address");--> statement-breakpoint
CREATE INDEX "ledger_postings_entry" ON "ledger_postings" USING btree ("entry_id");--> statement-breakpoint
CREATE INDEX "ledger_postings_account" ON "ledger_postings" USING btree ("ledger_account_id","currency");--> statement-breakpoint
CREATE INDEX "wallet_transactions_account_created" ON "wallet_transactions" USING btree ("wallet_account_id","created_at" DESC);