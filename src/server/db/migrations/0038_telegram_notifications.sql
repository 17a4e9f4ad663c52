CREATE TABLE "telegram_notifications" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"event_key" text NOT NULL,
	"event" text NOT NULL,
	"user_id" uuid NOT NULL,
	"wallet_transaction_id" uuid NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"outcome" text,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "telegram_notifications_event_key_unique" UNIQUE("event_key")
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "telegram_notifications" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "telegram_notifications" ADD CONSTRAINT "telegram_notifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telegram_notifications" ADD CONSTRAINT "telegram_notifications_wallet_transaction_id_wallet_transactions_id_fk" FOREIGN KEY ("wallet_transaction_id") REFERENCES "public"."wallet_transactions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "telegram_notifications_due" ON "telegram_notifications" USING btree ("next_attempt_at") WHERE "telegram_notifications"."outcome" IS NULL;