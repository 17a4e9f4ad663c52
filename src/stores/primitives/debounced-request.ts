/**
 * A request sent a while after the last change of its input (SPEC §9: 300 ms after the last keystroke), where
 * only the newest answer counts: a newer `schedule` or a `cancel` aborts the one in flight and drops its answer.
 */
export type DebouncedRequest<I> = {
  /** Sends `input` after `delayMs` (the default delay when not given), dropping whatever was pending. */
  schedule: (input: I, delayMs?: number) => void;
  /** Drops whatever is pending or in flight. */
  cancel: () => void;
};

export type DebouncedRequestOptions<I, T> = {
  delayMs: number;
  load: (input: I, signal: AbortSignal) => Promise<T>;
  /** The newest request's answer. */
  onResult: (result: T, input: I) => void;
  /** The newest request's failure. */
  onError: (error: unknown, input: I) => void;
};

export function createDebouncedRequest<I, T>(options: DebouncedRequestOptions<I, T>): DebouncedRequest<I> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let controller: AbortController | undefined;
  let sequence = 0;

  function cancel(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    controller?.abort();
    controller = undefined;
    sequence++;
  }

  function schedule(input: I, delayMs = options.delayMs): void {
    cancel();
    const mine = sequence;
    timer = setTimeout(() => {
      timer = undefined;
      controller = new AbortController();
      options.load(input, controller.signal).then(
        (result) => {
          if (mine === sequence) options.onResult(result, input);
        },
        (error: unknown) => {
          if (mine === sequence) options.onError(error, input);
        },
      );
    }, delayMs);
  }

  return { schedule, cancel };
}
