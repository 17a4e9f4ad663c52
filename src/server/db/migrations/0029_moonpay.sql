ALTER TABLE "buy_orders" ADD COLUMN "delivery" text DEFAULT 'LEDGER' NOT NULL;--> statement-breakpoint
ALTER TABLE "buy_orders" ADD COLUMN "wallet_address" text;--> statement-breakpoint
ALTER TABLE "buy_orders" ADD COLUMN "provider_status" text;--> statement-breakpoint
ALTER TABLE "buy_orders" ADD COLUMN "provider_tx_hash" text;--> statement-breakpoint
ALTER TABLE "buy_orders" ADD COLUMN "provider_amount" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "buy_orders" ADD COLUMN "chain_deposit_id" uuid;--> statement-breakpoint
ALTER TABLE "buy_orders" ADD CONSTRAINT "buy_orders_chain_deposit_id_chain_deposits_id_fk" FOREIGN KEY ("chain_deposit_id") REFERENCES "public"."chain_deposits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "buy_orders_awaiting_coins" ON "buy_orders" USING btree ("wallet_account_id","currency") WHERE "buy_orders"."delivery" = 'CHAIN' AND "buy_orders"."state" = 'PENDING';--> statement-breakpoint
ALTER TABLE "buy_orders" ADD CONSTRAINT "buy_orders_chain_deposit" UNIQUE("chain_deposit_id");