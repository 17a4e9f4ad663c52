DROP INDEX "payout_sandbox_payouts_undelivered";--> statement-breakpoint
ALTER TABLE "payout_sandbox_payouts" DROP COLUMN "webhook_delivered";--> statement-breakpoint
ALTER TABLE "payout_sandbox_payouts" DROP COLUMN "webhook_attempts";--> statement-breakpoint
ALTER TABLE "payout_sandbox_payouts" DROP COLUMN "next_attempt_at";--> statement-breakpoint
ALTER TABLE "payout_sandbox_payouts" DROP COLUMN "last_error";