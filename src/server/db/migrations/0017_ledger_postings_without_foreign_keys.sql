ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_entry_id_ledger_entries_id_fk";
--> statement-breakpoint
ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_ledger_account_id_ledger_accounts_id_fk";
