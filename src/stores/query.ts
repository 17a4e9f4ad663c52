import { atom, computed, map, onMount, type ReadableAtom } from 'nanostores';

/**
 * Gateway reads as stores (SPEC §4 'Loading lists', §7): pending sets `loading` and clears `error`, rejected
 * sets `error`, fulfilled stores `data`. A result stays cached 60 s after its last reader leaves; polling is
 * off unless asked for (balances poll every 10 s).
 */
export type Loadable<T> = { data: T | undefined; loading: boolean; error: unknown };

export const KEEP_UNUSED_MS = 60_000;

const IDLE: Loadable<never> = { data: undefined, loading: false, error: undefined };
const STARTING: Loadable<never> = { data: undefined, loading: true, error: undefined };

type Entry = { readers: number; poll?: ReturnType<typeof setInterval>; unfocus?: () => void; evict?: ReturnType<typeof setTimeout>; seq: number; inFlight?: Promise<void> };

/** Calls `listener` when the page comes back into view: window focus, the tab shown again, a page restored from the back-forward cache. */
function onPageBack(listener: () => void): () => void {
  const target = globalThis.window as Window | undefined;
  if (!target?.addEventListener) return () => {};
  const visible = () => {
    if (target.document.visibilityState === 'visible') listener();
  };
  target.addEventListener('focus', listener);
  target.addEventListener('pageshow', listener);
  target.document.addEventListener('visibilitychange', visible);
  return () => {
    target.removeEventListener('focus', listener);
    target.removeEventListener('pageshow', listener);
    target.document.removeEventListener('visibilitychange', visible);
  };
}

export type QueryOptions<A, T> = {
  /** One cache entry per key. */
  key: (args: A) => string;
  load: (args: A) => Promise<T>;
  pollMs?: number;
  /** Loads again when the page comes back into view (focus, tab shown, back from another site), while read. */
  refetchOnFocus?: boolean;
  keepUnusedMs?: number;
};

export type Query<A, T> = {
  /** A store of the entry `args` names; while it has readers the entry is loaded (and polled), and kept after. */
  watch: (args: ReadableAtom<A | null>) => ReadableAtom<Loadable<T>>;
  /** Loads the entry again now, whoever reads it; the newest answer wins. */
  refetch: (args: A) => Promise<void>;
  /** Refetches every cached entry (after a change that touches them all). */
  refetchAll: () => Promise<void>;
  /** The cached state of an entry, for actions that need the data without subscribing. */
  peek: (args: A) => Loadable<T>;
  /** Drops every entry: on sign-out. */
  clear: () => void;
};

export function createQuery<A, T>(options: QueryOptions<A, T>): Query<A, T> {
  const keep = options.keepUnusedMs ?? KEEP_UNUSED_MS;
  const $cache = map<Record<string, Loadable<T>>>({});
  const entries = new Map<string, Entry>();
  const argsOf = new Map<string, A>();

  const update = (key: string, patch: Partial<Loadable<T>>) => $cache.setKey(key, { ...($cache.get()[key] ?? IDLE), ...patch });

  function run(args: A): Promise<void> {
    const key = options.key(args);
    let entry = entries.get(key);
    if (!entry) {
      entry = { readers: 0, seq: 0 };
      entries.set(key, entry);
      argsOf.set(key, args);
      // Loaded with no reader (an action's refetch): kept as long as an unused one would be.
      entry.evict = setTimeout(() => evict(key), keep);
    }
    const seq = ++entry.seq;
    const current = entry;
    update(key, { loading: true, error: undefined });
    // Started on a microtask so a loader that throws at once is a rejection like any other.
    const done = Promise.resolve(args).then(options.load).then(
      (data) => {
        if (current.seq === seq && entries.get(key) === current) update(key, { data, loading: false, error: undefined });
      },
      (error: unknown) => {
        if (current.seq === seq && entries.get(key) === current) update(key, { loading: false, error });
      },
    );
    current.inFlight = done.finally(() => {
      if (current.seq === seq) current.inFlight = undefined;
    });
    return done;
  }

  function evict(key: string) {
    entries.delete(key);
    argsOf.delete(key);
    const { [key]: _gone, ...rest } = $cache.get();
    $cache.set(rest);
  }

  function use(args: A) {
    const key = options.key(args);
    const entry = entries.get(key) ?? { readers: 0, seq: 0 };
    entries.set(key, entry);
    argsOf.set(key, args);
    entry.readers += 1;
    if (entry.evict) clearTimeout(entry.evict);
    entry.evict = undefined;
    const cached = $cache.get()[key];
    if (!cached?.data && !entry.inFlight) void run(args);
    if (options.pollMs && !entry.poll) {
      entry.poll = setInterval(() => {
        if (!entry.inFlight) void run(args);
      }, options.pollMs);
    }
    if (options.refetchOnFocus && !entry.unfocus) {
      entry.unfocus = onPageBack(() => {
        if (!entry.inFlight) void run(args);
      });
    }
  }

  function release(args: A) {
    const key = options.key(args);
    const entry = entries.get(key);
    if (!entry) return;
    entry.readers -= 1;
    if (entry.readers > 0) return;
    if (entry.poll) clearInterval(entry.poll);
    entry.poll = undefined;
    entry.unfocus?.();
    entry.unfocus = undefined;
    entry.evict = setTimeout(() => evict(key), keep);
  }

  return {
    watch(args$) {
      const $view = computed([args$, $cache], (args, cache): Loadable<T> => {
        if (args === null) return IDLE;
        return cache[options.key(args)] ?? STARTING;
      });
      onMount($view, () => {
        let current: A | null = null;
        const unbind = args$.subscribe((args) => {
          if (current !== null && args !== null && options.key(current) === options.key(args)) return;
          if (args !== null) use(args);
          if (current !== null) release(current);
          current = args;
        });
        return () => {
          unbind();
          if (current !== null) release(current);
          current = null;
        };
      });
      return $view;
    },
    refetch: (args) => run(args),
    refetchAll: async () => {
      await Promise.all([...argsOf.values()].map((args) => run(args)));
    },
    peek: (args) => $cache.get()[options.key(args)] ?? IDLE,
    clear() {
      const read: [A, number][] = [];
      for (const [key, entry] of entries) {
        if (entry.poll) clearInterval(entry.poll);
        entry.unfocus?.();
        if (entry.evict) clearTimeout(entry.evict);
        entry.seq += 1;
        const args = argsOf.get(key);
        if (entry.readers > 0 && args !== undefined) read.push([args, entry.readers]);
      }
      entries.clear();
      argsOf.clear();
      $cache.set({});
      // Whatever is on screen right now loads afresh rather than waiting for a reader that is already there.
      for (const [args, readers] of read) for (let i = 0; i < readers; i += 1) use(args);
    },
  };
}

/** A store that always holds the same arguments: for queries that take none. */
export function always<A>(args: A): ReadableAtom<A | null> {
  return atom<A | null>(args);
}
