ALTER TABLE "withdrawals" ADD COLUMN "usd_value" numeric(38, 8);--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "review_reasons" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "review_decision" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "reviewed_by" uuid;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "reviewed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "review_note" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_reviewed_by_users_id_fk" FOREIGN KEY ("reviewed_by") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "withdrawals_account_created" ON "withdrawals" USING btree ("wallet_account_id","created_at");--> statement-breakpoint
CREATE INDEX "withdrawals_under_review" ON "withdrawals" USING btree ("created_at") WHERE "withdrawals"."state" = 'UNDER_REVIEW';