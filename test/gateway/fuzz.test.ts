// Issue 14: a seeded, bounded fuzz of every route in the route table, generated from
// each route's request schemas (test/gateway/fuzz/), with no credential, an API key
// and a platform + tenant admin's token. Whatever the input: no 5xx, every error is
// problem+json with its correlation id, no body over 64 KiB; and afterwards the admin
// still signs in and the key still works. How long the event loop stalls while these
// requests are in flight is a figure, not a test (it depends on the machine's load):
// `npm run bench:fuzz-stalls` runs the same cases and prints it, naming the cases in
// flight during the worst stalls.
//
// FUZZ_SEED replays a run (the seed is in every failure report); FUZZ_REQUESTS sets
// how many route cases are generated (the special requests come on top); FUZZ_EXAMPLES
// how many examples of each kind of failure the report shows.
//
// Engines: the compute nodes are real (fuzz/target.ts), so a chat or an Ollama pull has
// a healthy node to reach and a 503 is never a legitimate answer here: any 5xx fails.
// Pull URLs point at a loopback port nobody listens on: no download ever leaves the machine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedFromEnv } from './fuzz/prng.js';
import { check, Failures } from './fuzz/checks.js';
import { CHAT_MODEL, sendCases, startFuzzTarget, type FuzzTarget } from './fuzz/target.js';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2500);
const EXAMPLES = Number(process.env.FUZZ_EXAMPLES ?? 3);

describe('fuzz: generated hostile requests on every route', () => {
  let target: FuzzTarget;
  const seed = seedFromEnv();

  before(async () => {
    target = await startFuzzTarget();
  });
  after(async () => {
    await target?.close();
  });

  it('answers every request without a 5xx, an oversized body or an error outside the problem shape', async () => {
    const failures = new Failures();
    const statuses = new Map<string, number>();
    await sendCases(target, seed, REQUESTS, (c, answer) => {
      const band = answer.status ? `${Math.floor(answer.status / 100)}xx` : 'none';
      statuses.set(band, (statuses.get(band) ?? 0) + 1);
      for (const [kind, detail] of check(c, answer)) failures.add(c, answer, kind, detail);
    });
    const sent = [...statuses.values()].reduce((a, b) => a + b, 0);
    const bands = [...statuses]
      .sort()
      .map(([band, n]) => `${band} ${n}`)
      .join(', ');
    console.log(`fuzz: seed ${seed}, ${sent} requests (${bands}), ${failures.total} failing answers`);
    if (failures.distinct > 0) assert.fail(failures.report(seed, EXAMPLES));
  });

  it('leaves the admin able to sign in and the API key working', async () => {
    const { gw, admin, fx } = target;
    const login = await gw.request('POST', '/api/auth/login', { json: { username: admin.admin.username, password: admin.admin.password } });
    assert.equal(login.status, 200, `admin login after the fuzz (seed ${seed}): ${login.text}`);
    const me = await gw.request('GET', '/api/auth/me', { token: login.body.token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.id, admin.admin.id);
    const workspaces = await gw.request('GET', '/api/os/workspaces', { apiKey: fx.apiKey });
    assert.equal(workspaces.status, 200, `the API key after the fuzz (seed ${seed}): ${workspaces.text}`);
    const chat = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: fx.apiKey,
      json: { model: CHAT_MODEL, messages: [{ role: 'user', content: 'still there?' }] },
    });
    assert.equal(chat.status, 200, `chat with the API key after the fuzz (seed ${seed}): ${chat.text}`);
  });
});
