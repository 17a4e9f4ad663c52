CREATE TABLE "signer_signed_payments" (
	"reference" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"signed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "custody_public_keys" ADD COLUMN "mac" text;--> statement-breakpoint
CREATE INDEX "signer_signed_payments_currency_time" ON "signer_signed_payments" USING btree ("currency","signed_at");