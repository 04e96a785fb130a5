// Loaded with `node --import` before the conformance suite (see suite.ts). Every published
// @modelcontextprotocol/conformance imports `globSync` from 'fs', which exists from Node 22
// on; on Node 20 that import alone stops the whole CLI. Only its `tier-check` command calls
// it (we never run that), so the suite's 'fs' is given a globSync that says so if called.
import { register } from 'node:module';

if (!('globSync' in (await import('node:fs')))) register('./node20-fs-glob-hooks.mjs', import.meta.url);
