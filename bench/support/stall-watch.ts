// Names the requests behind an event-loop stall, and tells a blocked loop from a
// starved one (bench/fuzz-stalls.ts). The gateway runs in the bench's own process, so monitorEventLoopDelay
// measures it, but only says how long the worst stall was. This watch ticks every
// 10 ms; on a late tick it notes the cases in flight and, where Linux tells (per-
// thread schedstat), how much of the stall the loop's thread spent on a CPU: a
// handler that blocks runs all along, while a thread starved by a busy machine (the
// scrypt threads of concurrent logins, other processes on 2 cores) mostly waits for one.
import { readFileSync } from 'node:fs';
import type { FuzzCase } from '../../test/gateway/fuzz/cases.js';

const TICK_MS = 10;

/** The calling thread's time on a CPU and waiting for one, in ms; undefined off Linux. */
function threadTimes(): { run: number; wait: number } | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return run === undefined || wait === undefined ? undefined : { run: run / 1e6, wait: wait / 1e6 };
  } catch {
    return undefined;
  }
}

export interface Stall {
  ms: number;
  /** Time the loop's thread ran during the stall, and waited for a CPU (undefined where unknown). */
  runMs?: number;
  waitMs?: number;
  cases: string[];
}

export class StallWatch {
  readonly inFlight = new Set<FuzzCase>();
  private readonly stalls: Stall[] = [];
  private last = performance.now();
  private times = threadTimes();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly limitMs: number) {
    this.timer = setInterval(() => {
      const now = performance.now();
      const times = threadTimes();
      const late = now - this.last - TICK_MS;
      if (late > this.limitMs) {
        const cases = [...this.inFlight].map((c) => `#${c.n} ${c.method} ${c.path.slice(0, 80)} (${c.input})`);
        this.stalls.push({
          ms: late,
          cases,
          ...(times && this.times ? { runMs: times.run - this.times.run, waitMs: times.wait - this.times.wait } : {}),
        });
      }
      this.last = now;
      this.times = times;
    }, TICK_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The worst late tick, or undefined when none was later than the limit. */
  worst(): Stall | undefined {
    return [...this.stalls].sort((a, b) => b.ms - a.ms)[0];
  }

  /** How many ticks came later than the limit. */
  get count(): number {
    return this.stalls.length;
  }

  /** The worst stalls, each with the cases that were in flight when it ended. */
  report(limit = 5): string {
    return [...this.stalls]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, limit)
      .map((s) => {
        const cpu =
          s.runMs === undefined
            ? ''
            : ` (the loop's thread ran ${s.runMs.toFixed(0)} ms of it, waited ${s.waitMs!.toFixed(0)} ms for a CPU)`;
        return `  ~${s.ms.toFixed(0)} ms late${cpu}, in flight:\n${s.cases.map((c) => `      ${c}`).join('\n')}`;
      })
      .join('\n');
  }
}
