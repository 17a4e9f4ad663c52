ALTER TABLE "sweeps" ADD COLUMN "block_height" bigint;--> statement-breakpoint
ALTER TABLE "sweeps" ADD COLUMN "in_doubt_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sweeps" ADD COLUMN "reopened" integer DEFAULT 0 NOT NULL;