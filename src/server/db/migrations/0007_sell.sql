CREATE TABLE "payout_sandbox_cards" (
	"token" text PRIMARY KEY NOT NULL,
	"bin" text NOT NULL,
	"last4" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_sandbox_payouts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"reference" text NOT NULL,
	"token" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"currency" text NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"reason" text,
	"due_at" timestamp with time zone NOT NULL,
	"webhook_delivered" boolean DEFAULT false NOT NULL,
	"webhook_attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_error" text,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "payout_sandbox_payouts_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payout_sandbox_payouts_reference_unique" UNIQUE("reference")
);
--> statement-breakpoint
CREATE TABLE "sell_orders" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"idempotency_key" text NOT NULL,
	"request_hash" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"fiat_currency" text NOT NULL,
	"fiat_amount" numeric(78, 0) NOT NULL,
	"rate" text NOT NULL,
	"rate_id" uuid NOT NULL,
	"provider_token" text NOT NULL,
	"masked_card" text NOT NULL,
	"bank_code" text NOT NULL,
	"bank_system" text NOT NULL,
	"saved_card_id" uuid,
	"state" text DEFAULT 'PROCESSING' NOT NULL,
	"provider_payout_id" text,
	"submit_attempts" integer DEFAULT 0 NOT NULL,
	"failure_reason" text,
	"wallet_transaction_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "sell_orders_idempotency" UNIQUE("wallet_account_id","idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "sell_rate_quotes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"currency" text NOT NULL,
	"fiat_currency" text NOT NULL,
	"rate" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sell_saved_cards" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"fiat_currency" text NOT NULL,
	"provider_token" text NOT NULL,
	"masked_card" text NOT NULL,
	"bank_code" text NOT NULL,
	"bank_system" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sell_saved_cards_token" UNIQUE("wallet_account_id","fiat_currency","provider_token")
);
--> statement-breakpoint
ALTER TABLE "payout_sandbox_payouts" ADD CONSTRAINT "payout_sandbox_payouts_token_payout_sandbox_cards_token_fk" FOREIGN KEY ("token") REFERENCES "public"."payout_sandbox_cards"("token") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sell_orders" ADD CONSTRAINT "sell_orders_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sell_orders" ADD CONSTRAINT "sell_orders_saved_card_id_sell_saved_cards_id_fk" FOREIGN KEY ("saved_card_id") REFERENCES "public"."sell_saved_cards"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sell_orders" ADD CONSTRAINT "sell_orders_wallet_transaction_id_wallet_transactions_id_fk" FOREIGN KEY ("wallet_transaction_id") REFERENCES "public"."wallet_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sell_rate_quotes" ADD CONSTRAINT "sell_rate_quotes_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sell_saved_cards" ADD CONSTRAINT "sell_saved_cards_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payout_sandbox_payouts_due" ON "payout_sandbox_payouts" USING btree ("due_at") WHERE "payout_sandbox_payouts"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "payout_sandbox_payouts_undelivered" ON "payout_sandbox_payouts" USING btree ("next_attempt_at") WHERE "payout_sandbox_payouts"."status" <> 'PENDING' AND NOT "payout_sandbox_payouts"."webhook_delivered";--> statement-breakpoint
CREATE INDEX "sell_orders_unsubmitted" ON "sell_orders" USING btree ("created_at") WHERE "sell_orders"."state" = 'PROCESSING' AND "sell_orders"."provider_payout_id" IS NULL;