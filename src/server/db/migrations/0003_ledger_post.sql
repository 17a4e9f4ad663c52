-- Custom SQL migration file, put your code below! --
-- ledger_post: one journal entry, its balance updates and its postings, atomically and in one round trip.
-- Idempotent by key (a replay returns the first entry, replayed = true). Balance rows are locked in
-- (account, currency) order so concurrent entries never deadlock; a user's balance is guarded by
-- `available >= amount` (and by the table's CHECK) so it never goes below zero.
-- Errors: WL001 malformed or unbalanced entry, WL002 insufficient funds, WL003 unknown ledger account.
CREATE OR REPLACE FUNCTION ledger_post(
  p_key text, p_kind text, p_reference text,
  p_accounts uuid[], p_currencies text[], p_buckets text[], p_amounts numeric[]
) RETURNS TABLE (entry_id bigint, replayed boolean)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  v_entry bigint;
  r record;
  v_allow boolean;
BEGIN
  INSERT INTO ledger_entries (idempotency_key, kind, reference) VALUES (p_key, p_kind, p_reference)
    ON CONFLICT (idempotency_key) DO NOTHING RETURNING id INTO v_entry;
  IF v_entry IS NULL THEN
    SELECT e.id INTO v_entry FROM ledger_entries e WHERE e.idempotency_key = p_key;
    RETURN QUERY SELECT v_entry, true;
    RETURN;
  END IF;

  IF coalesce(cardinality(p_accounts), 0) < 2
     OR cardinality(p_currencies) IS DISTINCT FROM cardinality(p_accounts)
     OR cardinality(p_buckets) IS DISTINCT FROM cardinality(p_accounts)
     OR cardinality(p_amounts) IS DISTINCT FROM cardinality(p_accounts)
     OR EXISTS (SELECT 1 FROM unnest(p_buckets, p_amounts) AS t(b, a)
                WHERE b IS NULL OR b NOT IN ('AVAILABLE', 'ON_HOLD') OR a IS NULL OR a = 0 OR a <> trunc(a))
     OR EXISTS (SELECT 1 FROM unnest(p_currencies, p_amounts) AS t(c, a) GROUP BY c HAVING sum(a) <> 0) THEN
    RAISE EXCEPTION 'ledger entry % is malformed or does not sum to zero per currency', p_key USING ERRCODE = 'WL001';
  END IF;

  FOR r IN
    SELECT t.acc, t.cur,
           sum(CASE WHEN t.bucket = 'AVAILABLE' THEN t.amt ELSE 0 END) AS d_available,
           sum(CASE WHEN t.bucket = 'ON_HOLD' THEN t.amt ELSE 0 END) AS d_hold
      FROM unnest(p_accounts, p_currencies, p_buckets, p_amounts) AS t(acc, cur, bucket, amt)
     GROUP BY t.acc, t.cur
     ORDER BY t.acc, t.cur
  LOOP
    LOOP
      UPDATE ledger_balances b
         SET available = b.available + r.d_available, on_hold = b.on_hold + r.d_hold, updated_at = now()
       WHERE b.ledger_account_id = r.acc AND b.currency = r.cur
         AND (b.allow_negative OR (b.available >= -r.d_available AND b.on_hold >= -r.d_hold));
      EXIT WHEN FOUND;
      IF EXISTS (SELECT 1 FROM ledger_balances b WHERE b.ledger_account_id = r.acc AND b.currency = r.cur) THEN
        RAISE EXCEPTION 'insufficient funds: % %', r.acc, r.cur USING ERRCODE = 'WL002';
      END IF;
      SELECT a.allow_negative INTO v_allow FROM ledger_accounts a WHERE a.id = r.acc;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'no ledger account %', r.acc USING ERRCODE = 'WL003';
      END IF;
      IF NOT v_allow AND (r.d_available < 0 OR r.d_hold < 0) THEN
        RAISE EXCEPTION 'insufficient funds: % %', r.acc, r.cur USING ERRCODE = 'WL002';
      END IF;
      INSERT INTO ledger_balances (ledger_account_id, currency, available, on_hold, allow_negative)
        VALUES (r.acc, r.cur, r.d_available, r.d_hold, v_allow)
        ON CONFLICT (ledger_account_id, currency) DO NOTHING;
      EXIT WHEN FOUND;
      -- Another transaction created the row first: apply the update to it.
    END LOOP;
  END LOOP;

  INSERT INTO ledger_postings (entry_id, ledger_account_id, currency, bucket, amount)
    SELECT v_entry, t.acc, t.cur, t.bucket, t.amt
      FROM unnest(p_accounts, p_currencies, p_buckets, p_amounts) AS t(acc, cur, bucket, amt);
  RETURN QUERY SELECT v_entry, false;
END
$fn$;
