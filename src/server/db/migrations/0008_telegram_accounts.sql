CREATE TABLE "telegram_accounts" (
	"telegram_id" bigint PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"username" text,
	"first_name" text DEFAULT '' NOT NULL,
	"language_code" text,
	"linked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telegram_link_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "telegram_accounts" ADD CONSTRAINT "telegram_accounts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telegram_link_codes" ADD CONSTRAINT "telegram_link_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "telegram_accounts_user_unique" ON "telegram_accounts" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "telegram_link_codes_user" ON "telegram_link_codes" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "telegram_link_codes_expiry" ON "telegram_link_codes" USING btree ("expires_at") WHERE "telegram_link_codes"."used_at" is null;