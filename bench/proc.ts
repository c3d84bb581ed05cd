/**
 * What the bench reads about processes from Linux's /proc: resident memory (and its peak, which writing 5
 * to clear_refs resets), CPU time used, and finding the Temporal server's process by its command line.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const round = (n: number) => Math.round(n * 100) / 100;

export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export function memoryMiB(pid: number): { peakRssMiB: number; rssMiB: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakRssMiB: round(kib('VmHWM') / 1024), rssMiB: round(kib('VmRSS') / 1024) };
  } catch {
    return null;
  }
}

let ticksPerSecond: number | null = null;

/** User + system CPU seconds a process has used so far (NaN when it cannot be read). */
export function cpuSeconds(pid: number): number {
  try {
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    // The fields after the command name (which may hold spaces) start at the state, field 3.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return NaN;
  }
}

/** The pid of the process whose command line has every one of `parts` (null if none). */
export function findPid(parts: string[]): number | null {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (parts.every((p) => cmdline.includes(p)) && !cmdline[0].endsWith('bash')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** CPU seconds of several processes now, to subtract later: `perRequestMs(before, after, n)`. */
export function cpuSnapshot(pids: Record<string, number | null | undefined>): Record<string, number> {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? cpuSeconds(pid) : NaN]));
}

export function cpuMsPerRequest(before: Record<string, number>, after: Record<string, number>, requests: number): Record<string, number> {
  return Object.fromEntries(Object.keys(before).map((name) => [name, round(((after[name] - before[name]) * 1000) / requests)]));
}
