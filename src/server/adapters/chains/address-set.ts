import type pg from 'pg';

/**
 * A custody's deposit addresses held in memory for a block scan, compactly: a million as a Map of strings took about
 * 200 MB (two strings and an entry each); here each is its key's bytes (and a fixed-size value's) in one sorted
 * Buffer, found by binary search, so a million 33-byte keys with 48-character values take about 81 MB. A few added
 * later wait in a small Map; a load (many at once) is sorted on its own and merged with the set in one pass.
 */
export type AddressSet = {
  /** Adds `count` keys (`keySize` bytes each, end to end in `keys`) with their values (`valueSize` bytes each). */
  add(keys: Buffer, values: Buffer, count: number): void;
  get(key: Buffer): string | undefined;
  readonly size: number;
};

/** Keys waiting in the map at most; past this they are merged into the sorted buffers. */
const PENDING_MAX = 4096;

export function createAddressSet(keySize: number, valueSize: number): AddressSet {
  let keys = Buffer.alloc(0);
  let values = Buffer.alloc(0);
  let count = 0;
  const pending = new Map<string, string>();

  const find = (key: Buffer): number => {
    let low = 0;
    let high = count - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const order = key.compare(keys, middle * keySize, (middle + 1) * keySize);
      if (order === 0) return middle;
      if (order > 0) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  };

  /** The new keys sorted by an index (no copies), then merged with the set's in one pass; a key met twice is kept once. */
  const merge = (newKeys: Buffer, newValues: Buffer, added: number) => {
    const order = new Uint32Array(added);
    for (let i = 0; i < added; i++) order[i] = i;
    order.sort((a, b) => newKeys.compare(newKeys, b * keySize, (b + 1) * keySize, a * keySize, (a + 1) * keySize));
    const nextKeys = Buffer.allocUnsafe((count + added) * keySize);
    const nextValues = Buffer.allocUnsafe((count + added) * valueSize);
    let kept = 0;
    let i = 0;
    let j = 0;
    while (i < count || j < added) {
      const n = order[j] ?? 0;
      const fromSet = j >= added || (i < count && newKeys.compare(keys, i * keySize, (i + 1) * keySize, n * keySize, (n + 1) * keySize) > 0);
      const [source, sourceValues, at] = fromSet ? [keys, values, i++] : [newKeys, newValues, (j++, n)];
      if (kept > 0 && source.compare(nextKeys, (kept - 1) * keySize, kept * keySize, at * keySize, (at + 1) * keySize) === 0) continue;
      source.copy(nextKeys, kept * keySize, at * keySize, (at + 1) * keySize);
      sourceValues.copy(nextValues, kept * valueSize, at * valueSize, (at + 1) * valueSize);
      kept++;
    }
    // Keys met twice leave the buffers longer than needed: cut to size (the set lives as long as the process).
    keys = kept === count + added ? nextKeys : Buffer.from(nextKeys.subarray(0, kept * keySize));
    values = kept === count + added ? nextValues : Buffer.from(nextValues.subarray(0, kept * valueSize));
    count = kept;
  };

  return {
    add(newKeys, newValues, added) {
      if (newKeys.length < added * keySize || newValues.length < added * valueSize) throw new RangeError(`${added} keys of ${keySize} bytes and values of ${valueSize}`);
      if (added + pending.size <= PENDING_MAX) {
        for (let n = 0; n < added; n++) {
          const key = newKeys.subarray(n * keySize, (n + 1) * keySize);
          if (find(key) < 0) pending.set(key.toString('latin1'), newValues.toString('latin1', n * valueSize, (n + 1) * valueSize));
        }
        return;
      }
      const waiting = [...pending];
      pending.clear();
      const allKeys = Buffer.concat([newKeys.subarray(0, added * keySize), ...waiting.map(([key]) => Buffer.from(key, 'latin1'))]);
      const allValues = Buffer.concat([newValues.subarray(0, added * valueSize), ...waiting.map(([, value]) => Buffer.from(value, 'latin1'))]);
      merge(allKeys, allValues, added + waiting.length);
    },
    get(key) {
      const at = find(key);
      if (at >= 0) return values.toString('latin1', at * valueSize, (at + 1) * valueSize);
      return pending.get(key.toString('latin1'));
    },
    get size() {
      return count + pending.size;
    },
  };
}

/** Fixed-size entries gathered end to end in chunks (no object per entry), for `AddressSet.add`. */
export function entryBuffers(keySize: number, valueSize: number) {
  const CHUNK = 65_536;
  const keyChunks: Buffer[] = [];
  const valueChunks: Buffer[] = [];
  let count = 0;
  return {
    push(key: Buffer, value: string) {
      if (key.length !== keySize) throw new RangeError(`an address key is ${keySize} bytes, not ${key.length}`);
      const at = count % CHUNK;
      if (at === 0) {
        keyChunks.push(Buffer.alloc(CHUNK * keySize));
        valueChunks.push(Buffer.alloc(CHUNK * valueSize));
      }
      key.copy(keyChunks[keyChunks.length - 1] ?? Buffer.alloc(0), at * keySize);
      valueChunks[valueChunks.length - 1]?.write(value, at * valueSize, valueSize, 'latin1');
      count++;
    },
    get size() {
      return count;
    },
    addTo(set: AddressSet) {
      if (count > 0) set.add(Buffer.concat(keyChunks), Buffer.concat(valueChunks), count);
    },
  };
}

/** Rows read per query when a set loads (keyset pages: a million rows at once is a few hundred MB of objects). */
const ADDRESS_PAGE = 50_000;
/** New deposit addresses are looked up with this overlap, so a row committed late (its `created_at` earlier) is not missed. */
const ADDRESS_OVERLAP = "interval '10 minutes'";

/**
 * The network's deposit addresses for a scan's set: every one when `since` is null (keyset pages on the primary key),
 * else those created from `since` less the overlap, found through `deposit_addresses_network_created_at` (a lookup of
 * the few new rows, not a walk of the network's million: the walk took ~1.3 s a scan at a million addresses). The new
 * rows are gathered first (MATERIALIZED), so no plan walks the key's order to filter by time, then paged by address.
 * Gives each row to `each` and returns the latest `created_at` seen (the next call's `since`).
 */
export async function readDepositAddresses(pool: pg.Pool, network: string, since: Date | null, each: (address: string) => void): Promise<Date | null> {
  let after = '';
  let latest = since;
  for (;;) {
    const rows =
      since === null
        ? await pool.query<{ address: string; created_at: Date }>(
            `SELECT address, created_at FROM deposit_addresses WHERE network = $1 AND address > $2 ORDER BY address LIMIT ${ADDRESS_PAGE}`,
            [network, after],
          )
        : await pool.query<{ address: string; created_at: Date }>(NEW_ADDRESSES_SQL, [network, after, since]);
    for (const row of rows.rows) {
      each(row.address);
      if (!latest || row.created_at > latest) latest = row.created_at;
    }
    if (rows.rows.length < ADDRESS_PAGE) return latest;
    after = rows.rows[rows.rows.length - 1]?.address ?? '';
  }
}

/** The rows added since $3 (less the overlap), a page of them by address after $2 (exported for the EXPLAIN test). */
export const NEW_ADDRESSES_SQL = `WITH fresh AS MATERIALIZED (
    SELECT address, created_at FROM deposit_addresses WHERE network = $1 AND created_at >= $3::timestamptz - ${ADDRESS_OVERLAP})
  SELECT address, created_at FROM fresh WHERE address > $2 ORDER BY address LIMIT ${ADDRESS_PAGE}`;
