import { readFileSync } from 'node:fs';

/** The middle value (the upper one of an even count); NaN when there is none. */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
}

/** The p-th percentile of values sorted ascending (nearest rank); 0 when there is none. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** The machine's CPU time so far by kind (/proc/stat's first line, in clock ticks); undefined where there is none. */
export function machineCpu(): { total: number; steal: number } | undefined {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  } catch {
    return undefined;
  }
  // cpu user nice system idle iowait irq softirq steal ...
  const ticks = line.split(/\s+/).slice(1, 9).map(Number);
  if (ticks.length < 8 || ticks.some((t) => !Number.isFinite(t))) return undefined;
  return { total: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] ?? 0 };
}

/**
 * The share of the machine's CPU time its hypervisor gave to others between two readings (a virtual machine's "steal"):
 * the time this machine's processes wanted a core and did not get it, which no software of ours decides.
 */
export function stolenShare(before: ReturnType<typeof machineCpu>, after: ReturnType<typeof machineCpu>): number | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  return (after.steal - before.steal) / (after.total - before.total);
}
