#!/usr/bin/env node
// The `gateway` command. Runs the compiled CLI (npm run build); from a source
// checkout that was never built, falls back to the TypeScript sources via tsx.
//
// `npm start` runs this with --max-semi-space-size=64 (MiB; Node 20 defaults to 16):
// a larger young generation means fewer scavenges, and fewer short-lived request
// objects promoted to the old generation. Measured on the chat path
// (bench/llm-proxy.ts): 16 → 32 MiB saved about 14 µs of CPU per request, and took
// p99 at 1,000 req/s from 14.6 to 5.2 ms in an A/B pair; 32 → 64 MiB halved the
// collections again and lowered p99 in four of five A/B pairs (4.8 → 3.4 ms JSON,
// 5.3 → 4.1 ms streams in the last), for ~50 MiB more RSS under load (631 → 680).
// V8 reads it only at start-up, so it must be a node flag: the line above stays a
// plain `env node` (`env -S` is not everywhere), and a direct `gateway start` takes
// it from NODE_OPTIONS. The benchmark starts the gateway with the flags of the
// `start` script.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const source = new URL('../src/cli/main.ts', import.meta.url);

let entry = compiled;
if (!existsSync(compiled)) {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    tsx = undefined;
  }
  if (!tsx || !existsSync(source)) {
    process.stderr.write('error: the Gateway is not built yet: run "npm run build" (or "npm start", which builds and starts it).\n');
    process.exit(1);
  }
  tsx.register();
  entry = source;
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
