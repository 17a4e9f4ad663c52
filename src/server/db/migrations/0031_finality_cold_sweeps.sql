ALTER TABLE "custody_movements" ADD COLUMN "block_height" bigint;--> statement-breakpoint
ALTER TABLE "custody_movements" ADD COLUMN "in_doubt_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "custody_movements" ADD COLUMN "reopened" integer DEFAULT 0 NOT NULL;