ALTER TABLE "user_pincodes" ADD COLUMN "reset_sends" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "user_pincodes" ADD COLUMN "reset_sends_since" timestamp with time zone;