CREATE TABLE "evm_nonces" (
	"address" text PRIMARY KEY NOT NULL,
	"next_nonce" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "evm_transactions" (
	"reference" text PRIMARY KEY NOT NULL,
	"from_address" text NOT NULL,
	"nonce" bigint NOT NULL,
	"tx_hash" text NOT NULL,
	"raw_tx" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evm_transactions_tx_hash" UNIQUE("tx_hash")
);
--> statement-breakpoint
CREATE TABLE "sweep_deposits" (
	"deposit_id" uuid PRIMARY KEY NOT NULL,
	"sweep_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sweeps" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"network" text NOT NULL,
	"currency" text NOT NULL,
	"address" text NOT NULL,
	"derivation_index" integer NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"state" text DEFAULT 'PENDING' NOT NULL,
	"tx_hash" text,
	"fee" numeric(78, 0),
	"top_ups" integer DEFAULT 0 NOT NULL,
	"top_up_tx_hash" text,
	"top_up_fees" numeric(78, 0) DEFAULT '0' NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "sweep_deposits" ADD CONSTRAINT "sweep_deposits_deposit_id_chain_deposits_id_fk" FOREIGN KEY ("deposit_id") REFERENCES "public"."chain_deposits"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sweep_deposits" ADD CONSTRAINT "sweep_deposits_sweep_id_sweeps_id_fk" FOREIGN KEY ("sweep_id") REFERENCES "public"."sweeps"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "evm_transactions_from_nonce" ON "evm_transactions" USING btree ("from_address","nonce");--> statement-breakpoint
CREATE INDEX "sweeps_open" ON "sweeps" USING btree ("network","address") WHERE "sweeps"."state" IN ('PENDING', 'TOPPING_UP', 'SENT');