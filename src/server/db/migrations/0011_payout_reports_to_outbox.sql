-- The sandbox bank now queues its payout reports in webhook_deliveries when it decides a payout. Payouts decided
-- under the old code whose report was never delivered go back to PENDING (their due time has passed), so the next
-- round decides them again, with the same outcome, and queues their report before the delivery columns are dropped.
UPDATE "payout_sandbox_payouts" SET "status" = 'PENDING', "reason" = NULL WHERE "status" <> 'PENDING' AND NOT "webhook_delivered";
