#!/usr/bin/env node
// `npm test`: builds the migrated template database once, then runs every
// test/**/*.test.ts file with node's test runner (each file on its own copy).
// Set TEST_DATABASE_URL to run the same suite against a PostgreSQL server.
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);

const filter = process.argv.slice(2);
const files = walk('test')
  .filter((f) => f.endsWith('.test.ts') && (filter.length === 0 || filter.some((x) => f.includes(x))))
  .sort();

// One template per run, removed afterwards, so concurrent runs never share one.
process.env.TEST_RUN_ID ??= String(process.pid);
const templateDir = path.join(root, '.test-tmp', `template-${process.env.TEST_RUN_ID}`);
// The console's browser tests serve the built console: build it first (a few seconds).
if (files.some((f) => f.startsWith(path.join('test', 'console')))) {
  const built = spawnSync('npm', ['run', 'build:console', '--silent'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const template = spawnSync(process.execPath, ['--import', 'tsx', 'test/helpers/template.ts'], { stdio: 'inherit' });
if (template.status !== 0) process.exit(template.status ?? 1);

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// A test stuck on a wait with no deadline of its own (a query, a fetch) fails after
// this long instead of hanging the run until CI kills it. A file's describe() counts as
// one test here: on 2 cores shared with other work the slowest files (the fuzz test, the
// CLI ones, whose every command starts a process) take 2-3 minutes, so a file that would
// take longer is split rather than given more time. Two files at a time: one per core.
const timeout = process.env.TEST_TIMEOUT_MS ?? '300000';
const run = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeout}`, '--test-reporter=spec', ...files],
  {
    stdio: 'inherit',
  },
);
rmSync(templateDir, { recursive: true, force: true });
process.exit(run.status ?? 1);

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}
