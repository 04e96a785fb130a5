// Runs convert.ts in a child process: the conversion reads a 300 MB JSON file and
// peaks near 200 MB of memory for ~10 s, none of which may land in the server's
// process (its resident memory would keep the pages) or stall its event loop.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ConversionProgress, ConversionResult } from './convert.js';

/** The child's heap ceiling: the stream scan needs ~100 MB; a runaway source fails instead of swapping. */
const CHILD_HEAP_MB = 256;
const OUTPUT_LIMIT = 16 * 1024;
const CHILD_NICENESS = 10;

export interface RunningConversion {
  result: Promise<ConversionResult>;
  /** Stops the child (closing the embedder mid-conversion); the target is left as it was. */
  kill(): void;
}

export function convertInChildProcess(
  sourceFile: string,
  targetFile: string,
  maxWords?: number,
  onProgress: ConversionProgress = () => {},
  niceness = CHILD_NICENESS,
): RunningConversion {
  // From source (tests, `npm run dev`) the child needs the TypeScript loader; compiled, it does not.
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(new URL(fromSource ? './convert.ts' : './convert.js', import.meta.url));
  const execArgv = [`--max-old-space-size=${CHILD_HEAP_MB}`, ...(fromSource ? ['--import', import.meta.resolve('tsx')] : [])];
  const args = [...execArgv, entry, sourceFile, targetFile, ...(maxWords ? [String(maxWords)] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Background work: on a small machine the server's threads should win the CPU (the
  // conversion is CPU-bound for ~10 s and otherwise shows up as event-loop delay).
  try {
    if (child.pid && niceness !== 0) setPriority(child.pid, niceness);
  } catch {
    // not permitted here (some containers): it only runs a little less politely
  }

  // stdout is JSON lines: progress as it comes ({"progress":0.25}), the result last.
  let stdout = '';
  let outcome: ConversionResult | undefined;
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    const lines = (stdout + text).split('\n');
    stdout = (lines.pop() ?? '').slice(-OUTPUT_LIMIT);
    for (const line of lines) {
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (typeof (message as { progress?: unknown })?.progress === 'number') onProgress((message as { progress: number }).progress);
      else outcome = message as ConversionResult;
    }
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-OUTPUT_LIMIT)));

  const result = new Promise<ConversionResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) {
        if (outcome) resolve(outcome);
        else reject(new Error('The word-vector conversion ended without a result'));
        return;
      }
      const why = stderr.trim().split('\n').slice(-3).join(' ') || (signal ? `stopped by ${signal}` : `exit code ${code}`);
      reject(new Error(`Converting the word vectors failed: ${why}`));
    });
  });
  return { result, kill: () => child.kill('SIGKILL') };
}
