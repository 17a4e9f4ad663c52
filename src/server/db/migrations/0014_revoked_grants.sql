CREATE TABLE "revoked_grants" (
	"grant_id" text PRIMARY KEY NOT NULL,
	"revoked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "revoked_grants_at" ON "revoked_grants" USING btree ("revoked_at");--> statement-breakpoint
-- A live Grant leaving oidc_payload is a revocation, whoever deletes it (the provider, a password reset); expired
-- grants pruned later are not.
CREATE FUNCTION oidc_grant_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.expires_at IS NULL OR OLD.expires_at > now() THEN
    INSERT INTO revoked_grants (grant_id) VALUES (OLD.id) ON CONFLICT (grant_id) DO UPDATE SET revoked_at = now();
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER oidc_payload_grant_revoked AFTER DELETE ON oidc_payload FOR EACH ROW WHEN (OLD.type = 'Grant') EXECUTE FUNCTION oidc_grant_revoked();
