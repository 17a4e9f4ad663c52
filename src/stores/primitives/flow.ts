import { atom, computed, onMount, type ReadableAtom } from 'nanostores';
import { redirectPage } from '@nanostores/router';
import { $router, type RouteName } from '../router.ts';

type Page = NonNullable<ReturnType<typeof $router.get>>;

/** Where a guard sends the user instead of the route asked for; undefined: the route may stay. */
export type Redirect = { route: RouteName; params?: Record<string, string> } | undefined;

/** What a flow's builder may declare besides its stores; all of it ends when the flow is left. */
export type FlowScope = {
  /** Runs when the user leaves the flow's routes (or a test closes it). */
  onLeave: (cleanup: () => void) => void;
  /** A redirect rule over the current page and `stores`, checked whenever one of them changes while inside the flow. */
  guard: (stores: readonly ReadableAtom<unknown>[], rule: (page: Page) => Redirect) => void;
  /** Follows a store while the flow is open (not at once: only its changes). */
  follow: <V>(store: ReadableAtom<V>, listener: (value: V) => void) => void;
};

export type Flow<T> = {
  routes: readonly RouteName[];
  /**
   * This visit's stores. While something reads it (the flow's screens), the flow opens when the router enters one of
   * its routes and closes, with its cleanup, when the router leaves them: a new visit starts fresh.
   */
  $current: ReadableAtom<T | undefined>;
  /** Opens a visit now, or returns the open one: for tests and for actions that run before the screen. */
  open: () => T;
  close: () => void;
};

/**
 * A flow in the manner of slowreader's pages: a builder makes the flow's stores, guards and cleanup per visit;
 * nothing runs at import time and nothing registers itself elsewhere. Screens only render `$current` and call
 * its actions; paths come from the router.
 */
export function createFlow<T>(routes: readonly RouteName[], build: (scope: FlowScope) => T): Flow<T> {
  const $current = atom<T | undefined>(undefined);
  const inside = (page: Page | undefined): page is Page => !!page && routes.includes(page.route);
  let cleanups: (() => void)[] = [];
  let starters: (() => () => void)[] = [];

  const scope: FlowScope = {
    onLeave: (cleanup) => cleanups.push(cleanup),
    guard(stores, rule) {
      starters.push(() => {
        const $target = computed([$router, ...stores], (page) => (inside(page) ? rule(page) : undefined));
        return $target.subscribe((target) => {
          if (target) redirectPage($router, target.route as never, (target.params ?? {}) as never);
        });
      });
    },
    follow(store, listener) {
      starters.push(() => store.listen(listener));
    },
  };

  // The visit is kept here, not read back from $current: reading an unused store mounts it for a moment.
  let visit: T | undefined;

  function open(): T {
    if (visit !== undefined) return visit;
    cleanups = [];
    starters = [];
    const opened = build(scope);
    visit = opened;
    $current.set(opened);
    for (const start of starters) cleanups.push(start());
    return opened;
  }

  function close(): void {
    if (visit === undefined) return;
    const done = cleanups;
    cleanups = [];
    starters = [];
    visit = undefined;
    $current.set(undefined);
    for (const cleanup of done.reverse()) cleanup();
  }

  // Entering the flow's routes opens a visit, leaving them closes it; only the router closes, so a test's visit stays.
  onMount($current, () => {
    if (inside($router.get())) open();
    return $router.listen((page) => {
      if (inside(page)) open();
      else close();
    });
  });

  return { routes, $current, open, close };
}
