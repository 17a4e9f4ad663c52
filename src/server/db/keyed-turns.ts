/**
 * Turns per key inside this process. Work on a key waits here, in memory, for the work before it on any of its keys,
 * instead of holding a pooled connection while PostgreSQL makes it wait for the same rows' lock: a burst on one hot
 * row (an attacked account's sign-in throttle row, one account's orders) then holds one connection, not the whole
 * pool, and other users' queries keep theirs. The database's row locks still order work between processes, and stay
 * what makes it correct: a turn only saves connections.
 *
 * Every caller's place is taken synchronously on all its keys at once, so the waits follow one order and never form
 * a cycle. `waitMs` bounds the wait: past it the work runs anyway (the database orders it, as without turns), and the
 * work after it still waits for the work before. `onIdle(key)` runs when the last work on a key has ended.
 */
export type KeyedTurns = <T>(keys: readonly string[], work: () => Promise<T>, waitMs?: number) => Promise<T>;

export function createKeyedTurns(onIdle?: (key: string) => void): KeyedTurns {
  const tails = new Map<string, Promise<void>>();
  return async (keys, work, waitMs) => {
    const unique = [...new Set(keys)];
    const before = Promise.all(unique.map((key) => tails.get(key)));
    let done = () => {};
    const mine = new Promise<void>((resolve) => (done = resolve));
    for (const key of unique) tails.set(key, mine);
    const end = () => {
      done();
      for (const key of unique) {
        if (tails.get(key) !== mine) continue;
        tails.delete(key);
        onIdle?.(key);
      }
    };
    let ours = true;
    try {
      if (waitMs === undefined) await before;
      else {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([before, new Promise<void>((resolve) => (timer = setTimeout(() => ((ours = false), resolve()), waitMs)))]);
        clearTimeout(timer);
      }
      return await work();
    } finally {
      // Ran without its turn: the work after it waits for the work before it too.
      if (ours) end();
      else void before.then(end);
    }
  };
}
