ALTER TABLE "custody_movements" ALTER COLUMN "tx_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "custody_movements" ALTER COLUMN "raw_tx" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "custody_movements" ADD COLUMN "kind" text DEFAULT 'COLD' NOT NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "waiting_for_funds_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "custody_movements" ADD CONSTRAINT "custody_movements_signed" CHECK ("custody_movements"."state" = 'SIGNING' OR ("custody_movements"."tx_hash" IS NOT NULL AND "custody_movements"."raw_tx" IS NOT NULL));