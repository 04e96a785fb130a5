// Background threads (document extraction, the built-in embedder) yield the cores
// to the thread that serves requests: a bulk upload should not slow chat answers.
// On Linux niceness is per thread, so a worker can lower its own priority alone;
// elsewhere (or without /proc) this does nothing.
import { readlinkSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setPriority } from 'node:os';

/** The nice value background threads run at (0 is normal, 19 the lowest). */
export const BACKGROUND_NICENESS = 10;

/**
 * Lowers the CPU priority of the calling thread only, once libuv's thread pool is up:
 * a thread inherits its creator's niceness, and the pool (file system, crypto, DNS
 * for the whole process) must not be born at background priority in a worker. Call it inside a worker thread:
 * on the main thread it would lower the whole process's main thread, requests included.
 * Resolves to whether it took effect; never rejects.
 */
export async function lowerThisThreadPriority(niceness = BACKGROUND_NICENESS): Promise<boolean> {
  if (process.platform !== 'linux') return false;
  try {
    await stat('/proc/thread-self'); // any call that runs on the pool starts it
    // `<pid>/task/<tid>`: the kernel's id of this very thread.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, niceness);
    return true;
  } catch {
    // No /proc, or a sandbox that forbids it: run at normal priority.
    return false;
  }
}
