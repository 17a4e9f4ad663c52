CREATE TABLE "desk_hedges" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"client_order_id" text NOT NULL,
	"exchange" text NOT NULL,
	"asset" text NOT NULL,
	"side" text NOT NULL,
	"amount" text NOT NULL,
	"exposure_usd" text NOT NULL,
	"state" text NOT NULL,
	"order_id" text,
	"price" text,
	"filled" text,
	"fee" text,
	"fee_currency" text,
	"error" text,
	"swap_order_ids" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone,
	CONSTRAINT "desk_hedges_client_order_id_unique" UNIQUE("client_order_id")
);
--> statement-breakpoint
CREATE TABLE "market_prices" (
	"kind" text NOT NULL,
	"asset" text NOT NULL,
	"source" text NOT NULL,
	"price" numeric(38, 8) NOT NULL,
	"market" text NOT NULL,
	"observed_at" timestamp with time zone NOT NULL,
	"fetched_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "market_prices_kind_asset_source_pk" PRIMARY KEY("kind","asset","source"),
	CONSTRAINT "market_prices_positive" CHECK ("market_prices"."price" > 0)
);
--> statement-breakpoint
ALTER TABLE "buy_rate_quotes" ADD COLUMN "prices" jsonb;--> statement-breakpoint
ALTER TABLE "sell_rate_quotes" ADD COLUMN "prices" jsonb;--> statement-breakpoint
ALTER TABLE "swap_quotes" ADD COLUMN "prices" jsonb;--> statement-breakpoint
CREATE INDEX "desk_hedges_asset" ON "desk_hedges" USING btree ("asset","created_at");