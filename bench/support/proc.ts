// A child's CPU time and resident memory, read from /proc (Linux), so they are
// measured from outside: asking the process would cost it work of its own.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU of every thread of `pid` so far, in ms (resolution: one clock tick, 10 ms). */
export function cpuMs(pid: number): number {
  return ticksToMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * CPU of the main thread alone (the event loop: every request's JavaScript), in ms.
 * The rest is other threads: V8's GC and compiler helpers, libuv's pool, worker
 * threads such as the embedded database's.
 */
export function mainThreadCpuMs(pid: number): number {
  return ticksToMs(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
}

function ticksToMs(stat: string): number {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / clockTicks();
}

/** Resident set size of `pid`, in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** CPU used by each of `pids` (all threads, and the main thread alone) while `work` runs, in ms. */
export async function measureCpu<T>(
  pids: Record<string, number>,
  work: () => Promise<T>,
): Promise<{ value: T; cpuMs: Record<string, number>; mainThreadCpuMs: Record<string, number> }> {
  const entries = Object.entries(pids);
  const before = entries.map(([, pid]) => [cpuMs(pid), mainThreadCpuMs(pid)] as const);
  const value = await work();
  const after = entries.map(([, pid]) => [cpuMs(pid), mainThreadCpuMs(pid)] as const);
  return {
    value,
    cpuMs: Object.fromEntries(entries.map(([name], i) => [name, after[i]![0] - before[i]![0]])),
    mainThreadCpuMs: Object.fromEntries(entries.map(([name], i) => [name, after[i]![1] - before[i]![1]])),
  };
}
