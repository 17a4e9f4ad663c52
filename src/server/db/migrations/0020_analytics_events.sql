CREATE TABLE "analytics_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"message_id" text NOT NULL,
	"anonymous_id" text NOT NULL,
	"user_id" text,
	"type" text NOT NULL,
	"name" text,
	"path" text,
	"app_type" text,
	"sent_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"payload" jsonb NOT NULL,
	CONSTRAINT "analytics_events_message" UNIQUE("anonymous_id","message_id")
);
--> statement-breakpoint
CREATE INDEX "analytics_events_received" ON "analytics_events" USING btree ("received_at");