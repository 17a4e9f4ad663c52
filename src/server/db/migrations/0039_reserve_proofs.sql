CREATE TABLE "reserve_leaves" (
	"proof_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"nonce" text NOT NULL,
	"leaf_hash" text NOT NULL,
	"balances" jsonb NOT NULL,
	"path" jsonb NOT NULL,
	CONSTRAINT "reserve_leaves_proof_id_user_id_pk" PRIMARY KEY("proof_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "reserve_proofs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"as_of" timestamp with time zone NOT NULL,
	"root_hash" text NOT NULL,
	"body" jsonb NOT NULL
);
--> statement-breakpoint
ALTER TABLE "reserve_leaves" ADD CONSTRAINT "reserve_leaves_proof_id_reserve_proofs_id_fk" FOREIGN KEY ("proof_id") REFERENCES "public"."reserve_proofs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reserve_leaves" ADD CONSTRAINT "reserve_leaves_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "reserve_proofs_as_of" ON "reserve_proofs" USING btree ("as_of");