import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAddressSet, entryBuffers } from '../../../../src/server/adapters/chains/address-set.ts';

const key = (n: number) => createHash('sha256').update(String(n)).digest().subarray(0, 8);
const value = (n: number) => `v${String(n % 10_000).padStart(4, '0')}`;

describe('the compact address set of the block scans', () => {
  it('finds every address added, loaded at once or a few at a time, with its value, and nothing else', () => {
    const set = createAddressSet(8, 5);
    const added = new Map<number, string>();
    // A first load (merged), a few more (waiting in the map), some again, then enough to merge the waiting ones in.
    const batches = [[...Array(30_000).keys()], [40_001, 40_002, 5], [...Array(3_000).keys()].map((i) => 50_000 + i), [...Array(5_000).keys()].map((i) => 60_000 + i)];
    for (const batch of batches) {
      const entries = entryBuffers(8, 5);
      for (const n of batch) entries.push(key(n), value(n));
      entries.addTo(set);
      for (const n of batch) added.set(n, value(n));
    }
    expect(set.size).toBe(added.size);
    expect([...added].filter(([n, v]) => set.get(key(n)) !== v)).toEqual([]);
    for (const n of [40_000, 40_003, 70_000, -1]) expect(set.get(key(n))).toBeUndefined();
    expect(() => entryBuffers(8, 5).push(Buffer.alloc(7), 'x')).toThrow(RangeError);
  }, 30_000);
});
