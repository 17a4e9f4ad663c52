import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { $activeToast, hideToast, showToast, TOAST_CLEAR_MS, TOAST_MS } from '../../../src/stores/toasts.ts';

describe('toasts', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    hideToast();
    vi.useRealTimers();
  });

  it('shows for 2 s, then fades and is cleared 300 ms later', () => {
    showToast('Address copied');
    expect($activeToast.get()).toMatchObject({ text: 'Address copied', kind: 'success', leaving: false });
    vi.advanceTimersByTime(TOAST_MS - 1);
    expect($activeToast.get()?.leaving).toBe(false);
    vi.advanceTimersByTime(1);
    expect($activeToast.get()?.leaving).toBe(true);
    vi.advanceTimersByTime(TOAST_CLEAR_MS);
    expect($activeToast.get()).toBeNull();
  });

  it('a newer toast replaces the older one and gets its own full time', () => {
    showToast('first');
    vi.advanceTimersByTime(1_500);
    showToast('second', 'error');
    vi.advanceTimersByTime(1_000);
    expect($activeToast.get()).toMatchObject({ text: 'second', kind: 'error', leaving: false });
    vi.advanceTimersByTime(TOAST_MS + TOAST_CLEAR_MS);
    expect($activeToast.get()).toBeNull();
  });
});
