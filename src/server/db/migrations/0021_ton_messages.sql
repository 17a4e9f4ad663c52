CREATE TABLE "ton_messages" (
	"reference" text NOT NULL,
	"attempt" integer NOT NULL,
	"wallet" text NOT NULL,
	"seqno" integer NOT NULL,
	"valid_until" integer NOT NULL,
	"message_hash" text NOT NULL,
	"boc" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ton_messages_reference_attempt_pk" PRIMARY KEY("reference","attempt"),
	CONSTRAINT "ton_messages_message_hash_unique" UNIQUE("message_hash")
);
--> statement-breakpoint
CREATE INDEX "ton_messages_wallet_seqno" ON "ton_messages" USING btree ("wallet","seqno");