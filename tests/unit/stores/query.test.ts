import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { atom } from 'nanostores';
import { createQuery, KEEP_UNUSED_MS } from '../../../src/stores/query.ts';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

describe('loading lists (SPEC §4)', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('pending sets loading and clears the error, rejected sets the error, fulfilled stores the data', async () => {
    const calls: ReturnType<typeof deferred<string[]>>[] = [];
    const query = createQuery<string, string[]>({
      key: (account) => account,
      load: () => {
        const call = deferred<string[]>();
        calls.push(call);
        return call.promise;
      },
    });
    const $view = query.watch(atom<string | null>('acc-1'));
    const off = $view.listen(() => {});
    expect($view.get()).toEqual({ data: undefined, loading: true, error: undefined });
    await flush();
    calls[0]?.reject(new Error('down'));
    await flush();
    expect($view.get().loading).toBe(false);
    expect(($view.get().error as Error).message).toBe('down');
    void query.refetch('acc-1');
    expect($view.get()).toMatchObject({ loading: true, error: undefined });
    await flush();
    calls[1]?.resolve(['BTC']);
    await flush();
    expect($view.get()).toEqual({ data: ['BTC'], loading: false, error: undefined });
    off();
  });

  it('keeps a result 60 s after its last reader leaves, then forgets it', async () => {
    const load = vi.fn(async (account: string) => [account]);
    const query = createQuery({ key: (account: string) => account, load });
    const $args = atom<string | null>('acc-1');
    const $view = query.watch($args);
    let off = $view.listen(() => {});
    await flush();
    expect(load).toHaveBeenCalledTimes(1);
    off();
    await vi.advanceTimersByTimeAsync(30_000);
    off = $view.listen(() => {});
    expect($view.get().data).toEqual(['acc-1']);
    expect(load).toHaveBeenCalledTimes(1);
    off();
    await vi.advanceTimersByTimeAsync(KEEP_UNUSED_MS + 2_000);
    expect(query.peek('acc-1').data).toBeUndefined();
    off = $view.listen(() => {});
    await flush();
    expect(load).toHaveBeenCalledTimes(2);
    off();
  });

  it('polls while read, and stops when nobody reads', async () => {
    const load = vi.fn(async () => 'ok');
    const query = createQuery({ key: () => 'one', load, pollMs: 10_000 });
    const $view = query.watch(atom<null | true>(true));
    const off = $view.listen(() => {});
    await flush();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(load).toHaveBeenCalledTimes(4);
    off();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(load).toHaveBeenCalledTimes(4);
  });

  it('loads again when the page comes back into view (focus, tab shown, back-forward cache), only while read', async () => {
    const document = Object.assign(new EventTarget(), { visibilityState: 'visible' });
    vi.stubGlobal('window', Object.assign(new EventTarget(), { document }));
    try {
      const load = vi.fn(async () => 'ok');
      const query = createQuery({ key: () => 'one', load, refetchOnFocus: true });
      const off = query.watch(atom<null | true>(true)).listen(() => {});
      await flush();
      expect(load).toHaveBeenCalledTimes(1);
      window.dispatchEvent(new Event('focus'));
      await flush();
      window.dispatchEvent(new Event('pageshow'));
      await flush();
      document.dispatchEvent(new Event('visibilitychange'));
      await flush();
      expect(load).toHaveBeenCalledTimes(4);
      document.visibilityState = 'hidden';
      document.dispatchEvent(new Event('visibilitychange'));
      await flush();
      expect(load).toHaveBeenCalledTimes(4);
      off();
      // nanostores unmounts a store 1 s after its last reader left.
      await vi.advanceTimersByTimeAsync(1_100);
      window.dispatchEvent(new Event('focus'));
      await flush();
      expect(load).toHaveBeenCalledTimes(4);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('follows the arguments and shows nothing without them', async () => {
    const query = createQuery({ key: (c: string) => c, load: async (c: string) => c.toLowerCase() });
    const $args = atom<string | null>(null);
    const $view = query.watch($args);
    const off = $view.listen(() => {});
    expect($view.get()).toEqual({ data: undefined, loading: false, error: undefined });
    $args.set('BTC');
    await flush();
    expect($view.get().data).toBe('btc');
    $args.set('ETH');
    await flush();
    expect($view.get().data).toBe('eth');
    off();
  });

  it('lets the newest answer win when two loads overlap', async () => {
    const calls: ReturnType<typeof deferred<number>>[] = [];
    const query = createQuery({
      key: () => 'k',
      load: () => {
        const call = deferred<number>();
        calls.push(call);
        return call.promise;
      },
    });
    const $view = query.watch(atom<null | true>(true));
    const off = $view.listen(() => {});
    void query.refetch(true);
    await flush();
    calls[1]?.resolve(2);
    calls[0]?.resolve(1);
    await flush();
    expect($view.get().data).toBe(2);
    off();
  });

  it('turns a loader that throws at once into an error, not a crash', async () => {
    const query = createQuery<true, number>({
      key: () => 'k',
      load: () => {
        throw new Error('sync');
      },
    });
    await query.refetch(true);
    expect((query.peek(true).error as Error).message).toBe('sync');
  });

  it('forgets everything on clear', async () => {
    const query = createQuery({ key: () => 'k', load: async () => 1 });
    await query.refetch(true);
    expect(query.peek(true).data).toBe(1);
    query.clear();
    expect(query.peek(true).data).toBeUndefined();
  });
});
