-- The operator audit log is append-only: no UPDATE, DELETE or TRUNCATE, whoever asks (domain/operator/audit.ts).
CREATE OR REPLACE FUNCTION operator_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'operator_audit is append-only: % is refused', TG_OP USING ERRCODE = 'WL010';
END;
$$;--> statement-breakpoint
CREATE TRIGGER operator_audit_no_update BEFORE UPDATE OR DELETE ON operator_audit FOR EACH ROW EXECUTE FUNCTION operator_audit_append_only();--> statement-breakpoint
CREATE TRIGGER operator_audit_no_truncate BEFORE TRUNCATE ON operator_audit FOR EACH STATEMENT EXECUTE FUNCTION operator_audit_append_only();
