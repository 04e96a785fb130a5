// `npm run bench:fuzz-stalls`: how long the gateway's event loop stalls while hostile
// requests are in flight. The fuzz test's cases (test/gateway/fuzz/: generated from
// every route's schemas, with no credential, an API key and an admin's token) are sent
// 8 at a time to a gateway in this process, and the loop's delay is measured meanwhile
// (monitorEventLoopDelay, and a 10 ms tick that names the cases in flight during each
// late tick). The test asserts what the answers are; this prints how long they held
// the loop, a figure that depends on the machine and its load.
//
// A stall in which the loop's own thread hardly ran (Linux: per-thread schedstat) is the
// machine's (other processes, the scrypt threads of concurrent logins), not the
// gateway's: the report says how much of each worst stall the thread spent on a CPU.
//
// Environment: FUZZ_SEED (default the test's), FUZZ_REQUESTS (default 2500),
// BENCH_STALL_MS (late ticks reported, default 50). Results: stdout.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { boundedInt } from './support/stats.js';

const REQUESTS = boundedInt('FUZZ_REQUESTS', 2500, 1, 1_000_000);
const STALL_MS = boundedInt('BENCH_STALL_MS', 50, 10, 10_000);

// The test helpers start each gateway on a copy of a migrated template database: make one for this run.
process.env.TEST_RUN_ID = `bench-fuzz-${process.pid}`;
const template = spawnSync(process.execPath, ['--import', 'tsx', 'test/helpers/template.ts'], { stdio: 'inherit' });
if (template.status !== 0) process.exit(template.status ?? 1);
const { TEMPLATE_DIR } = await import('../test/helpers/paths.js');
const { seedFromEnv } = await import('../test/gateway/fuzz/prng.js');
const { CHAT_MODEL, sendCases, startFuzzTarget } = await import('../test/gateway/fuzz/target.js');
const { StallWatch } = await import('./support/stall-watch.js');

const seed = seedFromEnv();
const target = await startFuzzTarget();
try {
  // A first use costs once what no input can make it cost again: the tokenizer's tables
  // load after the first chat answer (~100 ms). It is paid before the measurement.
  const warmUp = await target.gw.request('POST', '/api/llm/v1/chat/completions', {
    apiKey: target.fx.apiKey,
    json: { model: CHAT_MODEL, messages: [{ role: 'user', content: 'warm up' }] },
  });
  if (warmUp.status !== 200) throw new Error(`warm-up chat answered ${warmUp.status}: ${warmUp.text}`);
  await import('gpt-tokenizer/encoding/o200k_base');

  const loop = monitorEventLoopDelay({ resolution: 10 });
  const stalls = new StallWatch(STALL_MS);
  let sent = 0;
  const started = performance.now();
  loop.enable();
  try {
    await sendCases(
      target,
      seed,
      REQUESTS,
      () => {
        sent++;
      },
      { start: (c) => stalls.inFlight.add(c), end: (c) => stalls.inFlight.delete(c) },
    );
  } finally {
    loop.disable();
    stalls.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const worst = stalls.worst();
  const ms = (ns: number) => (ns / 1e6).toFixed(0);
  console.log(`machine: ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)} at the end`);
  console.log(
    `fuzz-stalls: seed ${seed}, ${sent} hostile requests in ${seconds.toFixed(1)} s; event-loop delay p50 ${ms(loop.percentile(50))} ms, ` +
      `p99 ${ms(loop.percentile(99))} ms, worst ${ms(loop.max)} ms` +
      (worst?.runMs === undefined
        ? ''
        : ` (the loop's thread ran ${worst.runMs.toFixed(0)} ms of it, waited ${worst.waitMs!.toFixed(0)} ms for a CPU)`),
  );
  console.log(`${stalls.count} ticks later than ${STALL_MS} ms; the worst, with the cases in flight:\n${stalls.report()}`);
} finally {
  await target.close();
  rmSync(TEMPLATE_DIR, { recursive: true, force: true });
}
