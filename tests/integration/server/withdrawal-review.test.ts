import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { litecoinCustody } from '../../support/litecoin-custody.ts';
import type { Litecoind } from '../../support/litecoind.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { operatingFigures } from '../../../src/server/domain/operating-figures.ts';
import type { TransactionItem } from '../../../src/server/domain/history.ts';
import type { WithdrawalView } from '../../../src/server/domain/withdrawals/view.ts';
import { approveWithdrawal, listWithdrawalsUnderReview, rejectWithdrawal } from '../../../src/server/domain/withdrawals/review.ts';

/**
 * Withdrawal limits and review (issue 30 item 2) on Litecoin Core -regtest through the gateway: LTC at the development
 * reference price of $75 (no walk), a review above $100, a first withdrawal to an address reviewed above $30, and
 * $400 a day per user. A withdrawal waiting for review is never sent (the node's mempool stays empty) until approved,
 * then it is sent once however many operators approve; rejected, its hold goes back.
 */
describe('withdrawal limits and review on Litecoin Core regtest', () => {
  const lc = litecoinCustody({
    env: { WITHDRAWAL_DAILY_LIMIT_USD: '400', WITHDRAWAL_REVIEW_ABOVE_USD: '100', WITHDRAWAL_REVIEW_NEW_ADDRESS_ABOVE_USD: '30' },
    emailPrefix: 'review',
  });
  const { call, at, work, mine, signUp, balance, addressOf, history, withdraw, funded, completed } = lc;
  let node: Litecoind;
  let database: Database;
  let operator: string;
  const mempool = () => node.rpc.call<string[]>('getrawmempool');
  const row = async (id: string) =>
    (await database.pool.query<{ state: string; tx_hash: string | null; review_decision: string | null; reviewed_by: string | null }>('SELECT state, tx_hash, review_decision, reviewed_by FROM withdrawals WHERE id = $1', [id]))
      .rows[0];
  const reviewOf = async (id: string) => (await listWithdrawalsUnderReview(database.pool)).find((item) => item.orderId === id);

  beforeAll(async () => {
    ({ node, database } = await lc.start());
    const finance = await signUp('operator');
    operator = (await database.pool.query<{ user_id: string }>('SELECT user_id FROM wallet_accounts WHERE id = $1', [finance.accountId])).rows[0]?.user_id ?? '';
  }, 120_000);
  afterAll(() => lc.close());

  it('holds a withdrawal above the threshold unsent until approved, then sends it once when two operators approve together', async () => {
    const user = await funded('above', '5');
    const to = await node.newAddress();
    const sent = await withdraw(user, '2', to);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ state: 'IN_PROGRESS', underReview: true, hash: null });
    expect(await balance(user)).toEqual({ available: '3', onHold: '2' });
    expect(await reviewOf(sent.body.id)).toEqual({
      orderId: sent.body.id,
      userId: expect.any(String),
      email: expect.stringMatching(/^review-above-/),
      currency: 'LTC',
      network: 'LITECOIN',
      amount: '2',
      usd: '150.00',
      address: to,
      reasons: ['ABOVE_THRESHOLD', 'NEW_ADDRESS'],
      createdAt: expect.any(String),
    });
    // Worker rounds and blocks: nothing is signed or sent.
    for (let i = 0; i < 3; i += 1) await mine(1);
    expect(await mempool()).toEqual([]);
    expect(await row(sent.body.id)).toMatchObject({ state: 'UNDER_REVIEW', tx_hash: null });
    // The queue as the metrics read it (wallet_withdrawals_under_review), and not as a late open withdrawal.
    const figures = await operatingFigures(database.pool, []);
    expect(figures.reviewQueue).toEqual({ count: 1, oldestSeconds: expect.any(Number) });
    expect(figures.openWithdrawals).toEqual([]);
    const [item] = await history(user).then((items) => items.filter((t) => t.transactionType === 'WITHDRAWAL'));
    expect(item).toMatchObject({ state: 'IN_PROGRESS', underReview: true, pendingReason: 'UNDER_REVIEW', amount: '2' });
    const details = await call<TransactionItem>(user, 'GET', at(user, `/asset/transaction/${item?.id}`));
    expect(details.body).toMatchObject({ state: 'IN_PROGRESS', underReview: true, pendingReason: 'UNDER_REVIEW' });

    const audits: string[] = [];
    const decisions = await Promise.all(
      [1, 2].map(() =>
        approveWithdrawal(database.pool, { orderId: sent.body.id, operatorId: operator, reason: 'known customer' }, async (tx) => {
          audits.push((await tx.query<{ state: string }>('SELECT state FROM withdrawals WHERE id = $1', [sent.body.id])).rows[0]?.state ?? '');
        }),
      ),
    );
    expect(decisions.sort()).toEqual(['already', 'approved']);
    // onDecided ran once, inside the deciding transaction (it sees the order moved on).
    expect(audits).toEqual(['PENDING']);
    expect(await row(sent.body.id)).toMatchObject({ state: 'PENDING', review_decision: 'APPROVED', reviewed_by: operator });
    expect(await reviewOf(sent.body.id)).toBeUndefined();
    await work();
    const broadcast = await row(sent.body.id);
    expect(broadcast?.state).toBe('BROADCAST');
    expect(await mempool()).toEqual([broadcast?.tx_hash]);
    await work();
    expect(await mempool()).toEqual([broadcast?.tx_hash]);
    await completed(sent.body.id);
    expect(await node.received(to)).toBe(199_900_000n);
    expect(await balance(user)).toEqual({ available: '3', onHold: '0' });
    // Approving again changes nothing; rejecting an approved one is refused.
    expect(await approveWithdrawal(database.pool, { orderId: sent.body.id, operatorId: operator })).toBe('already');
    await expect(rejectWithdrawal(database.pool, { orderId: sent.body.id, operatorId: operator, reason: 'late' })).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_UNDER_REVIEW' });
  });

  it('gives a rejected withdrawal its hold back and shows it Failed with the reason, never sending it', async () => {
    const user = await funded('reject', '3');
    const sent = await withdraw(user, '1.5', await node.newAddress());
    expect(sent.body).toMatchObject({ state: 'IN_PROGRESS', underReview: true });
    expect(await balance(user)).toEqual({ available: '1.5', onHold: '1.5' });
    await expect(rejectWithdrawal(database.pool, { orderId: sent.body.id, operatorId: operator, reason: '  ' })).rejects.toMatchObject({ code: 'REVIEW_REASON_REQUIRED' });
    const decisions = await Promise.all([1, 2].map(() => rejectWithdrawal(database.pool, { orderId: sent.body.id, operatorId: operator, reason: 'does not match the account profile' })));
    expect(decisions.sort()).toEqual(['already', 'rejected']);
    await expect(approveWithdrawal(database.pool, { orderId: sent.body.id, operatorId: operator })).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_UNDER_REVIEW' });
    expect(await balance(user)).toEqual({ available: '3', onHold: '0' });
    expect((await history(user)).find((t) => t.transactionType === 'WITHDRAWAL')).toMatchObject({ state: 'FAILED', failureReason: 'REVIEW_REJECTED', underReview: false, pendingReason: null });
    expect((await call<WithdrawalView>(user, 'GET', at(user, `/withdrawal/${sent.body.id}`))).body).toMatchObject({ state: 'FAILED', failureReason: 'REVIEW_REJECTED', underReview: false });
    await mine(2);
    expect(await mempool()).toEqual([]);
    expect(await row(sent.body.id)).toMatchObject({ state: 'FAILED', tx_hash: null, review_decision: 'REJECTED' });
    // Unknown orders and operators are refused as such.
    await expect(approveWithdrawal(database.pool, { orderId: randomUUID(), operatorId: operator })).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_FOUND' });
    await expect(approveWithdrawal(database.pool, { orderId: 'nope', operatorId: operator })).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_FOUND' });
    await expect(approveWithdrawal(database.pool, { orderId: sent.body.id, operatorId: randomUUID() })).rejects.toMatchObject({ code: 'OPERATOR_NOT_FOUND' });
  });

  it('refuses what passes the daily limit with its code and what is left, one of two racing requests', async () => {
    const user = await funded('daily', '8');
    const to = await node.newAddress();
    // 3 × $97.50, each held for review (a new address), all counted.
    for (let i = 0; i < 3; i += 1) expect((await withdraw(user, '1.3', to)).body).toMatchObject({ underReview: true });
    const over = await withdraw(user, '1.5', to);
    expect(over.status).toBe(403);
    expect(over.body).toEqual({ exceptionCode: 'WITHDRAWAL_DAILY_LIMIT', message: 'This is over your daily withdrawal limit of $400.00 in 24 hours. You can send up to $107.50 more right now.' });
    // $90 each, $107.50 left: one passes, the other is refused.
    const racing = await Promise.all([withdraw(user, '1.2', to), withdraw(user, '1.2', to)]);
    expect(racing.map((answer) => answer.status).sort()).toEqual([200, 403]);
    expect(await balance(user)).toEqual({ available: '2.9', onHold: '5.1' });
    // A rejected one no longer counts.
    const [first] = await listWithdrawalsUnderReview(database.pool).then((items) => items.filter((item) => item.email?.startsWith('review-daily-')));
    await rejectWithdrawal(database.pool, { orderId: first?.orderId ?? '', operatorId: operator, reason: 'test' });
    expect((await withdraw(user, '1.3', to)).status).toBe(200);
  });

  it('reviews the first withdrawal to an address above the lower threshold, and not the next ones there', async () => {
    const user = await funded('new-address', '3');
    const to = await node.newAddress();
    const first = await withdraw(user, '0.5', to);
    expect(first.body).toMatchObject({ underReview: true });
    expect((await reviewOf(first.body.id))?.reasons).toEqual(['NEW_ADDRESS']);
    // At or below $30 to another new address: not reviewed.
    const small = await withdraw(user, '0.4', await node.newAddress());
    expect(small.body).toMatchObject({ underReview: false });
    expect(await approveWithdrawal(database.pool, { orderId: first.body.id, operatorId: operator })).toBe('approved');
    await work();
    await completed(first.body.id);
    await completed(small.body.id);
    const again = await withdraw(user, '0.5', to);
    expect(again.body).toMatchObject({ state: 'IN_PROGRESS', underReview: false });
    await work();
    expect((await row(again.body.id))?.state).toBe('BROADCAST');
    await completed(again.body.id);
  });

  it('holds a transfer to another user above the threshold, and makes it on approval', async () => {
    const sender = await funded('internal', '6');
    const recipient = await signUp('recipient');
    const address = await addressOf(recipient);
    const sent = await withdraw(sender, '2', address);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ internal: true, state: 'IN_PROGRESS', underReview: true, fee: '0' });
    expect(await balance(sender)).toEqual({ available: '4', onHold: '2' });
    expect(await balance(recipient)).toEqual({ available: '0', onHold: '0' });
    expect(await history(recipient)).toEqual([]);
    expect(await approveWithdrawal(database.pool, { orderId: sent.body.id, operatorId: operator })).toBe('approved');
    expect(await balance(sender)).toEqual({ available: '4', onHold: '0' });
    expect(await balance(recipient)).toEqual({ available: '2', onHold: '0' });
    expect((await history(sender)).find((t) => t.transactionType === 'WITHDRAWAL')).toMatchObject({ state: 'COMPLETED', underReview: false, amount: '2' });
    expect(await history(recipient)).toEqual([expect.objectContaining({ transactionType: 'DEPOSIT', state: 'COMPLETED', amount: '2', fee: '0' })]);
    // To that user again, under the threshold: made at once. The daily limit counts transfers: $225 used, $175 left.
    expect((await withdraw(sender, '1', address)).body).toMatchObject({ state: 'COMPLETED', underReview: false });
    expect(await balance(recipient)).toEqual({ available: '3', onHold: '0' });
    const over = await withdraw(sender, '2.5', address);
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ exceptionCode: 'WITHDRAWAL_DAILY_LIMIT', message: expect.stringContaining('up to $175.00 more') });
  });

  it('holds a withdrawal for review when its asset has no current price, whatever its size', async () => {
    const user = await funded('no-price', '1');
    await database.pool.query(
      `INSERT INTO app_setting (key, value) VALUES ('rates.walk', $1) ON CONFLICT (key) DO UPDATE SET value = app_setting.value || excluded.value, updated_at = now()`,
      [{ withheld: ['LTC'] }],
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const sent = await withdraw(user, '0.1', await node.newAddress());
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ state: 'IN_PROGRESS', underReview: true });
      expect(await reviewOf(sent.body.id)).toMatchObject({ usd: null, reasons: ['NO_PRICE'] });
      await work();
      expect(await mempool()).toEqual([]);
    } finally {
      await database.pool.query(`UPDATE app_setting SET value = value - 'withheld' WHERE key = 'rates.walk'`);
    }
  });
});
