/**
 * Turns per key inside this process. Work on a key waits here, in memory, for the work before it on any of its keys,
 * instead of holding a pooled connection while PostgreSQL makes it wait for the same rows' lock: a burst on one hot
 * row (an attacked account's sign-in throttle row) then holds one connection, not the whole pool, and other users'
 * queries keep theirs. The database's row locks still order work between processes.
 *
 * Every caller's place is taken synchronously on all its keys at once, so the waits follow one order and never form
 * a cycle. `onIdle(key)` runs when the last work on a key has ended.
 */
export type KeyedTurns = <T>(keys: readonly string[], work: () => Promise<T>) => Promise<T>;

export function createKeyedTurns(onIdle?: (key: string) => void): KeyedTurns {
  const tails = new Map<string, Promise<void>>();
  return async (keys, work) => {
    const unique = [...new Set(keys)];
    const before = unique.map((key) => tails.get(key));
    let done = () => {};
    const mine = new Promise<void>((resolve) => (done = resolve));
    for (const key of unique) tails.set(key, mine);
    try {
      await Promise.all(before);
      return await work();
    } finally {
      done();
      for (const key of unique) {
        if (tails.get(key) !== mine) continue;
        tails.delete(key);
        onIdle?.(key);
      }
    }
  };
}
