CREATE TABLE "swap_orders" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"quote_id" uuid NOT NULL,
	"idempotency_key" text NOT NULL,
	"state" text NOT NULL,
	"source_currency" text NOT NULL,
	"destination_currency" text NOT NULL,
	"source_amount" numeric(78, 0) NOT NULL,
	"destination_amount" numeric(78, 0) NOT NULL,
	"fee_amount" numeric(78, 0) NOT NULL,
	"rate" text NOT NULL,
	"wallet_transaction_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"closed_at" timestamp with time zone,
	CONSTRAINT "swap_orders_quote_id_unique" UNIQUE("quote_id"),
	CONSTRAINT "swap_orders_account_key" UNIQUE("wallet_account_id","idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "swap_quotes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"source_currency" text NOT NULL,
	"destination_currency" text NOT NULL,
	"source_amount" numeric(78, 0) NOT NULL,
	"destination_amount" numeric(78, 0) NOT NULL,
	"fee_amount" numeric(78, 0) NOT NULL,
	"spread_bps" integer NOT NULL,
	"rate" text NOT NULL,
	"fixed_side" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "swap_quotes_amounts" CHECK ("swap_quotes"."source_amount" > 0 AND "swap_quotes"."destination_amount" > 0 AND "swap_quotes"."fee_amount" >= 0)
);
--> statement-breakpoint
ALTER TABLE "swap_orders" ADD CONSTRAINT "swap_orders_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "swap_orders" ADD CONSTRAINT "swap_orders_quote_id_swap_quotes_id_fk" FOREIGN KEY ("quote_id") REFERENCES "public"."swap_quotes"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "swap_orders" ADD CONSTRAINT "swap_orders_wallet_transaction_id_wallet_transactions_id_fk" FOREIGN KEY ("wallet_transaction_id") REFERENCES "public"."wallet_transactions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "swap_quotes" ADD CONSTRAINT "swap_quotes_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "swap_orders_pending_expiry" ON "swap_orders" USING btree ("expires_at") WHERE "swap_orders"."state" = 'PENDING';--> statement-breakpoint
CREATE INDEX "swap_quotes_expires" ON "swap_quotes" USING btree ("expires_at");