import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { atom } from 'nanostores';
import { createCountdown, formatCountdown, runCountdown } from '../../../src/stores/primitives/countdown.ts';
import { createDebouncedRequest } from '../../../src/stores/primitives/debounced-request.ts';
import { createFlow } from '../../../src/stores/primitives/flow.ts';
import { $router } from '../../../src/stores/router.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('debounced request', () => {
  it('sends after the delay, and only the newest answer counts', async () => {
    const results: string[] = [];
    let release: (value: string) => void = () => {};
    const load = vi.fn((input: string) => (input === 'slow' ? new Promise<string>((resolve) => (release = resolve)) : Promise.resolve(`got ${input}`)));
    const request = createDebouncedRequest({ delayMs: 300, load, onResult: (result: string) => results.push(result), onError: () => results.push('error') });
    request.schedule('a');
    request.schedule('slow');
    await vi.advanceTimersByTimeAsync(299);
    expect(load).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(load).toHaveBeenCalledTimes(1);
    request.schedule('b', 0);
    release('late');
    await vi.advanceTimersByTimeAsync(0);
    expect(results).toEqual(['got b']);
    request.schedule('c');
    request.cancel();
    await vi.advanceTimersByTimeAsync(300);
    expect(results).toEqual(['got b']);
  });
});

describe('countdown', () => {
  it('counts whole seconds to a deadline while read, and formats them', async () => {
    const $deadline = atom<number | null>(Date.now() + 300_000);
    const countdown = createCountdown($deadline);
    const off = countdown.$secondsLeft.listen(() => {});
    expect(countdown.$secondsLeft.get()).toBe(300);
    await vi.advanceTimersByTimeAsync(1000);
    expect(countdown.$secondsLeft.get()).toBe(299);
    $deadline.set(null);
    expect(countdown.$secondsLeft.get()).toBe(0);
    off();
    expect(formatCountdown(299)).toBe('4:59');
  });

  it('runs down to zero and says so once', async () => {
    const seen: number[] = [];
    const done = vi.fn();
    runCountdown(2, () => Date.now(), (left) => seen.push(left), done);
    await vi.advanceTimersByTimeAsync(2500);
    expect(seen[0]).toBe(2);
    expect(seen.at(-1)).toBe(0);
    expect(done).toHaveBeenCalledTimes(1);
  });
});

describe('flow', () => {
  it('opens a fresh visit on entering its routes, guards them, and cleans up on leaving', () => {
    $router.open('/home');
    const cleanup = vi.fn();
    let built = 0;
    const flow = createFlow(['swap', 'swapOrder'], (scope) => {
      built += 1;
      const $ready = atom(false);
      scope.onLeave(cleanup);
      scope.guard([$ready], (page) => (page.route === 'swapOrder' && !$ready.get() ? { route: 'swap' } : undefined));
      return { $ready };
    });
    const off = flow.$current.listen(() => {});
    expect(flow.$current.get()).toBeUndefined();
    $router.open('/swap/order');
    expect($router.get()?.route).toBe('swap');
    const visit = flow.$current.get();
    expect(visit).toBeDefined();
    visit?.$ready.set(true);
    $router.open('/swap/order');
    expect($router.get()?.route).toBe('swapOrder');
    $router.open('/home');
    expect(flow.$current.get()).toBeUndefined();
    expect(cleanup).toHaveBeenCalledTimes(1);
    $router.open('/swap');
    expect(flow.$current.get()).not.toBe(visit);
    expect(built).toBe(2);
    off();
  });
});

describe('resume (an order in flight across a reload)', () => {
  it('brings back what was kept for the same account, forgets another account’s or a stale one', async () => {
    const { createResume, RESUME_MAX_AGE_MS } = await import('../../../src/stores/primitives/resume.ts');
    let clock = 1_000;
    const resume = createResume<{ order: string }>('test', () => clock);
    const restored: string[] = [];
    let forgotten = 0;
    const restore = ($account: ReturnType<typeof atom<string | null>>) =>
      resume.restore(
        $account,
        (kept) => restored.push(kept.order),
        () => (forgotten += 1),
      );

    resume.save('acc-1', { order: 'o-1' });
    restore(atom<string | null>('acc-1'))();
    expect(restored).toEqual(['o-1']);

    // The profile is not known yet after a reload: restored at once, undone when another account shows up.
    const $late = atom<string | null>(null);
    const stop = restore($late);
    expect(restored).toEqual(['o-1', 'o-1']);
    $late.set('acc-2');
    expect(forgotten).toBe(1);
    stop();
    restore(atom<string | null>('acc-1'))();
    expect(restored).toHaveLength(2);

    resume.save('acc-1', { order: 'o-2' });
    clock += RESUME_MAX_AGE_MS + 1;
    restore(atom<string | null>('acc-1'))();
    expect(restored).toHaveLength(2);

    resume.save('acc-1', { order: 'o-3' });
    resume.save('acc-1', undefined);
    restore(atom<string | null>('acc-1'))();
    expect(restored).toHaveLength(2);
  });
});
