CREATE TABLE "withdrawal_fee_quotes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"currency" text NOT NULL,
	"to_address" text NOT NULL,
	"fee" numeric(78, 0) NOT NULL,
	"estimate" numeric(78, 0) NOT NULL,
	"estimate_currency" text NOT NULL,
	"margin_bps" integer NOT NULL,
	"withdrawal_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "withdrawal_fee_quotes_amounts" CHECK ("withdrawal_fee_quotes"."fee" >= 0 AND "withdrawal_fee_quotes"."estimate" >= 0)
);
--> statement-breakpoint
ALTER TABLE "withdrawal_fee_quotes" ADD CONSTRAINT "withdrawal_fee_quotes_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawal_fee_quotes" ADD CONSTRAINT "withdrawal_fee_quotes_withdrawal_id_withdrawals_id_fk" FOREIGN KEY ("withdrawal_id") REFERENCES "public"."withdrawals"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "withdrawal_fee_quotes_expires" ON "withdrawal_fee_quotes" USING btree ("expires_at");