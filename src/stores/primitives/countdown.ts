import { atom, computed, onMount, type ReadableAtom } from 'nanostores';

export type Countdown = {
  /** Whole seconds until the deadline (0 without one), ticking once a second while something reads it. */
  $secondsLeft: ReadableAtom<number>;
  /** Reads the clock now: after a new deadline, so the first second is not a stale one. */
  restart: () => void;
};

/** A countdown to the deadline `$deadline` holds (local ms, as `now` tells time; null: nothing to count). */
export function createCountdown($deadline: ReadableAtom<number | null>, now: () => number = () => Date.now()): Countdown {
  const $tick = atom(now());
  const $secondsLeft = computed([$deadline, $tick], (deadline, tick) => (deadline === null ? 0 : Math.max(0, Math.ceil((deadline - tick) / 1000))));
  onMount($secondsLeft, () => {
    $tick.set(now());
    const interval = setInterval(() => $tick.set(now()), 1000);
    return () => clearInterval(interval);
  });
  return { $secondsLeft, restart: () => $tick.set(now()) };
}

/** SPEC §4: minutes:seconds, 5:00 down to 0:00. */
export function formatCountdown(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/**
 * Counts whole seconds down from `seconds` by the clock `now` (checked 4 times a second, so a slow timer never
 * skips the end): `onLeft` hears each value from `seconds` to 0, `onDone` runs at 0. Returns the stop.
 */
export function runCountdown(seconds: number, now: () => number, onLeft: (left: number) => void, onDone?: () => void): () => void {
  const deadline = now() + seconds * 1000;
  onLeft(seconds);
  const timer = setInterval(() => {
    const left = Math.max(0, Math.ceil((deadline - now()) / 1000));
    onLeft(left);
    if (left === 0) {
      clearInterval(timer);
      onDone?.();
    }
  }, 250);
  return () => clearInterval(timer);
}
