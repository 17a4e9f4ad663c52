import { atom } from 'nanostores';

/** SPEC §9: a toast shows for 2 s and is cleared 300 ms after it starts to hide. */
export const TOAST_MS = 2_000;
export const TOAST_CLEAR_MS = 300;

export type Toast = { id: number; text: string; kind: 'success' | 'error'; leaving: boolean };

export const $activeToast = atom<Toast | null>(null);

let nextId = 1;
let timers: ReturnType<typeof setTimeout>[] = [];

export function showToast(text: string, kind: Toast['kind'] = 'success'): void {
  for (const timer of timers) clearTimeout(timer);
  const id = nextId++;
  $activeToast.set({ id, text, kind, leaving: false });
  timers = [
    setTimeout(() => {
      const toast = $activeToast.get();
      if (toast?.id === id) $activeToast.set({ ...toast, leaving: true });
    }, TOAST_MS),
    setTimeout(() => {
      if ($activeToast.get()?.id === id) $activeToast.set(null);
    }, TOAST_MS + TOAST_CLEAR_MS),
  ];
}

export function hideToast(): void {
  for (const timer of timers) clearTimeout(timer);
  $activeToast.set(null);
}
