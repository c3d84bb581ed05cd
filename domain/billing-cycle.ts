/**
 * Billing cycles are calendar months in UTC, named `YYYY-MM`. Every workspace shares them: the monthly
 * grant runs at 00:00 UTC on the 1st and a cycle's plan credits expire when the next cycle starts.
 *
 * Pure functions of their inputs (no clock), so workflow code can use them deterministically.
 */
const CYCLE_RE = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function isCycle(value: unknown): value is string {
  return typeof value === 'string' && CYCLE_RE.test(value);
}

/** Throws a RangeError naming the expected shape; callers turn it into their own error type. */
export function parseCycle(value: string): { year: number; month: number } {
  const m = CYCLE_RE.exec(value);
  if (!m) throw new RangeError(`a billing cycle is written YYYY-MM (e.g. 2026-11), got '${value}'`);
  return { year: Number(m[1]), month: Number(m[2]) };
}

/** The cycle an instant falls in. */
export function cycleOf(at: Date): string {
  return `${String(at.getUTCFullYear()).padStart(4, '0')}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** First instant of the cycle (inclusive). */
export function cycleStart(cycle: string): Date {
  const { year, month } = parseCycle(cycle);
  return new Date(Date.UTC(year, month - 1, 1));
}

/** First instant after the cycle (exclusive end; also when its plan credits expire). */
export function cycleEnd(cycle: string): Date {
  const { year, month } = parseCycle(cycle);
  return new Date(Date.UTC(year, month, 1));
}

export function previousCycle(cycle: string): string {
  const { year, month } = parseCycle(cycle);
  return cycleOf(new Date(Date.UTC(year, month - 2, 1)));
}

export function nextCycle(cycle: string): string {
  return cycleOf(cycleEnd(cycle));
}
