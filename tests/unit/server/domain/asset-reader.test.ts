import { describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createAssetReader } from '../../../../src/server/domain/assets.ts';
import { COINS } from '../../../../src/lib/currencies.ts';
import type { DepositAddressGuard } from '../../../../src/server/domain/deposit-address-guard.ts';

/** A pool whose balance query answers when the test says so, with the balance the test sets. */
function fakePool() {
  const state = { available: '100000000', queries: 0, gate: undefined as Promise<void> | undefined };
  const pool = {
    async query() {
      state.queries++;
      const seen = state.available;
      await state.gate;
      return { rows: [{ currency: 'BTC', available: seen, on_hold: '0', address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' }] };
    },
  } as unknown as pg.Pool;
  return { pool, state };
}

const offer = { coins: COINS };
/** The stored address is taken as it is here (the guard's own checks: tests/integration/server/deposit-address-guard.test.ts). */
const guard: DepositAddressGuard = { seal: () => '', check: (_db, row) => Promise.resolve(row.address) };
const balanceOf = (json: string) => (JSON.parse(json) as Array<{ totalAvailable: string }>)[0]?.totalAvailable;

describe('the asset reader', () => {
  it('serves repeated reads from memory while notifications are trusted', async () => {
    const { pool, state } = fakePool();
    const reader = createAssetReader(pool, offer, { ttlMs: 60_000, trusted: () => true, guard });
    expect(balanceOf(await reader.json('a'))).toBe('1');
    await reader.json('a');
    await reader.json('a');
    expect(state.queries).toBe(1);
  });

  it('reads again after a change notification, and only for that account', async () => {
    const { pool, state } = fakePool();
    const reader = createAssetReader(pool, offer, { ttlMs: 60_000, trusted: () => true, guard });
    await reader.json('a');
    await reader.json('b');
    state.available = '200000000';
    reader.invalidate('a');
    expect(balanceOf(await reader.json('a'))).toBe('2');
    expect(balanceOf(await reader.json('b'))).toBe('1');
    expect(state.queries).toBe(3);
  });

  it('does not keep a read that overlapped a change', async () => {
    const { pool, state } = fakePool();
    const reader = createAssetReader(pool, offer, { ttlMs: 60_000, trusted: () => true, guard });
    let open: () => void = () => {};
    state.gate = new Promise((resolve) => (open = resolve));
    const slow = reader.json('a');
    state.available = '300000000';
    reader.invalidate('a');
    open();
    state.gate = undefined;
    expect(balanceOf(await slow)).toBe('1');
    expect(balanceOf(await reader.json('a'))).toBe('3');
  });

  it('makes one read for the requests that miss at once, and a new one for a request after a change', async () => {
    const { pool, state } = fakePool();
    const reader = createAssetReader(pool, offer, { ttlMs: 60_000, trusted: () => true, guard });
    let open: () => void = () => {};
    state.gate = new Promise((resolve) => (open = resolve));
    const first = Array.from({ length: 50 }, () => reader.json('a'));
    expect(state.queries).toBe(1);
    // A change while that read is under way: a request after it does not take the read begun before it.
    state.available = '400000000';
    reader.invalidate('a');
    const after = reader.json('a');
    const alongside = reader.json('a');
    expect(state.queries).toBe(2);
    open();
    state.gate = undefined;
    expect((await Promise.all(first)).map(balanceOf)).toEqual(Array.from({ length: 50 }, () => '1'));
    expect([balanceOf(await after), balanceOf(await alongside)]).toEqual(['4', '4']);
    // The second read began after the change, so it is kept.
    await reader.json('a');
    expect(state.queries).toBe(2);
  });

  it('shares no read while notifications are not known to arrive', async () => {
    const { pool, state } = fakePool();
    const reader = createAssetReader(pool, offer, { ttlMs: 60_000, trusted: () => false, guard });
    await Promise.all([reader.json('a'), reader.json('a'), reader.json('a')]);
    expect(state.queries).toBe(3);
  });

  it('caches nothing while notifications are not known to arrive, and forgets all on a reset', async () => {
    const { pool, state } = fakePool();
    let trusted = false;
    const reader = createAssetReader(pool, offer, { ttlMs: 60_000, trusted: () => trusted, guard });
    await reader.json('a');
    await reader.json('a');
    expect(state.queries).toBe(2);
    trusted = true;
    await reader.json('a');
    await reader.json('a');
    expect(state.queries).toBe(3);
    reader.clear();
    await reader.json('a');
    expect(state.queries).toBe(4);
  });

  it('expires entries after the safety TTL', async () => {
    const { pool, state } = fakePool();
    const reader = createAssetReader(pool, offer, { ttlMs: 1, trusted: () => true, guard });
    await reader.json('a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await reader.json('a');
    expect(state.queries).toBe(2);
  });
});
