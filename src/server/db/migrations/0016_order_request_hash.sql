ALTER TABLE "swap_orders" ADD COLUMN "request_hash" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "request_hash" text;