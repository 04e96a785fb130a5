#!/usr/bin/env node
// The `gateway` command. Runs the compiled CLI (npm run build); from a source
// checkout that was never built, falls back to the TypeScript sources via tsx.
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
