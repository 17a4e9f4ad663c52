CREATE TABLE "custody_public_keys" (
	"network" text NOT NULL,
	"derivation_index" integer NOT NULL,
	"public_key" text NOT NULL,
	"seed_fingerprint" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "custody_public_keys_network_derivation_index_pk" PRIMARY KEY("network","derivation_index")
);
--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "approval_seal" text;