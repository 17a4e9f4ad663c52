CREATE TABLE "operator_adjustments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_account_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"reason" text NOT NULL,
	"state" text DEFAULT 'PROPOSED' NOT NULL,
	"proposed_by" uuid NOT NULL,
	"proposed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_by" uuid,
	"decided_at" timestamp with time zone,
	"decision_reason" text,
	CONSTRAINT "operator_adjustments_amount" CHECK ("operator_adjustments"."amount" > 0),
	CONSTRAINT "operator_adjustments_four_eyes" CHECK ("operator_adjustments"."decided_by" IS NULL OR "operator_adjustments"."decided_by" <> "operator_adjustments"."proposed_by")
);
--> statement-breakpoint
CREATE TABLE "operator_audit" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"operator_id" uuid,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"subject" text NOT NULL,
	"reason" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "operator_roles" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"role" text NOT NULL,
	"granted_by" uuid,
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "operator_adjustments" ADD CONSTRAINT "operator_adjustments_wallet_account_id_wallet_accounts_id_fk" FOREIGN KEY ("wallet_account_id") REFERENCES "public"."wallet_accounts"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_roles" ADD CONSTRAINT "operator_roles_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "operator_adjustments_proposed" ON "operator_adjustments" USING btree ("proposed_at") WHERE "operator_adjustments"."state" = 'PROPOSED';--> statement-breakpoint
CREATE INDEX "operator_adjustments_account" ON "operator_adjustments" USING btree ("wallet_account_id","proposed_at");--> statement-breakpoint
CREATE INDEX "operator_audit_subject" ON "operator_audit" USING btree ("subject","id");--> statement-breakpoint
CREATE INDEX "operator_audit_operator" ON "operator_audit" USING btree ("operator_id","id");