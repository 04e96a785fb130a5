#!/usr/bin/env node
// The `gateway` command. Runs the compiled CLI (npm run build); from a source
// checkout that was never built, falls back to the TypeScript sources via tsx.
//
// `start` runs the server with the V8 settings of src/cli/start-flags.ts, however it
// was invoked (`npm start`, `gateway start`, `npx gateway start`): a node started
// without them runs `start` once more in a node started with them. V8 reads them only
// at start-up, and the line above stays a plain `env node` (`env -S` is not everywhere).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/', import.meta.url);
const source = new URL('../src/cli/', import.meta.url);

let base = compiled;
let ext = 'js';
if (!existsSync(new URL('main.js', compiled))) {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    tsx = undefined;
  }
  if (!tsx || !existsSync(new URL('main.ts', source))) {
    process.stderr.write('error: the Gateway is not built yet: run "npm run build" (or "npm start", which builds and starts it).\n');
    process.exit(1);
  }
  tsx.register();
  base = source;
  ext = 'ts';
}

const missing =
  process.argv[2] === 'start'
    ? (await import(new URL(`start-flags.${ext}`, base).href)).missingStartFlags(process.execArgv, process.env.NODE_OPTIONS)
    : [];
if (missing.length > 0) {
  const { rerunWithFlags } = await import(new URL(`start-flags.${ext}`, base).href);
  process.exitCode = await rerunWithFlags(missing);
} else {
  // Traces (OTEL_EXPORTER_OTLP_ENDPOINT) start before the CLI's modules load, so that the
  // instrumentations hook node:http and pg ahead of their first import. Without an
  // endpoint no OpenTelemetry module is loaded at all.
  if (process.argv[2] === 'start') {
    const tracing = await import(new URL(`../platform/tracing.${ext}`, base).href);
    if (tracing.tracingRequested(process.env)) await tracing.startTracing(process.env);
  }
  const { main } = await import(new URL(`main.${ext}`, base).href);
  process.exitCode = await main(process.argv.slice(2));
}
