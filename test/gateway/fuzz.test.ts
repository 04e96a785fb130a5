// Issue 14: a seeded, bounded fuzz of every route in the route table, generated from
// each route's request schemas (test/gateway/fuzz/), with no credential, an API key
// and a platform + tenant admin's token. Whatever the input: no 5xx, every error is
// problem+json with its correlation id, no body over 64 KiB, the event loop never
// blocked past ~200 ms (monitorEventLoopDelay; a stall in which the loop's thread was
// waiting for a CPU of this small, shared machine is reported but is not the gateway's);
// and afterwards the admin still signs in and the key still works.
//
// FUZZ_SEED replays a run (the seed is in every failure report); FUZZ_REQUESTS sets
// how many route cases are generated (the special requests come on top); FUZZ_EXAMPLES
// how many examples of each kind of failure the report shows.
//
// Engines: the compute nodes are real (fake OpenAI-compatible and Ollama servers on
// loopback, and the local engine on, with no model), so a chat or an Ollama pull has a
// healthy node to reach and a 503 is never a legitimate answer here: any 5xx fails.
// Pull URLs point at a loopback port nobody listens on: no download ever leaves the machine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { seedTenant, seedUser, tokenFor, type SeededTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver } from '../llm/chat-support.js';
import { createApiKey } from './support.js';
import { Rng, seedFromEnv } from './fuzz/prng.js';
import { generateCases, type Fixture, type FuzzCase } from './fuzz/cases.js';
import { send } from './fuzz/send.js';
import { check, Failures } from './fuzz/checks.js';
import { StallWatch } from './fuzz/stalls.js';
import { closedLoopbackUrl } from '../helpers/closed-port.js';

const CHAT_MODEL = 'fuzz-model';
const CONCURRENCY = 8;
const MAX_LOOP_DELAY_MS = 200;
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2500);
const EXAMPLES = Number(process.env.FUZZ_EXAMPLES ?? 3);

describe('fuzz: generated hostile requests on every route', () => {
  let gw: TestGateway;
  let engines: FakeEngine[];
  let admin: SeededTenant;
  let fx: Fixture;
  const seed = seedFromEnv();

  before(async () => {
    engines = [
      await startFakeOpenAI({ models: [CHAT_MODEL], reply: 'fuzz answer' }),
      await startFakeOllama({ models: ['present:latest'] }),
    ];
    gw = await gatewayOver(engines, {
      GATEWAY_LOCAL_ENGINE: 'on',
      GATEWAY_LOCAL_THREADS: '1',
      // Every fuzz request comes from 127.0.0.1 and most logins are wrong on purpose: the
      // per-address limit would otherwise lock out the final, legitimate login of the admin.
      GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
    });
    admin = await seedTenant(gw, 'fuzz', ['admin', 'platform_admin']);
    const throwaway = await seedTenant(gw, 'fuzzb');
    const adminJwt = await tokenFor(gw, admin.admin.id, admin.tenantId);
    const apiKey = (await createApiKey(gw, admin.tenantId, 'fuzz')).key;
    const closedUrl = await closedLoopbackUrl();
    const workspace = await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'fuzz target' } });
    const node = await gw.request('POST', '/api/llm/v1/nodes', {
      token: adminJwt,
      json: { name: 'fuzz target', engine: 'openai', url: closedUrl },
    });
    const collection = await gw.request('POST', `/api/os/workspaces/${workspace.body.id}/collections`, {
      apiKey,
      json: { name: 'fuzz target' },
    });
    const document = await gw.request('POST', `/api/os/collections/${collection.body.id}/documents`, {
      apiKey,
      json: { name: 'fuzz.txt', text: 'fuzz target' },
    });
    const thread = await gw.request('POST', '/api/llm/v1/threads', {
      apiKey,
      json: { messages: [{ role: 'user', content: 'fuzz target' }] },
    });
    const messages = await gw.request('GET', `/api/llm/v1/threads/${thread.body.id}/messages`, { apiKey });
    const assistant = await gw.request('POST', '/api/llm/v1/assistants', { apiKey, json: { model: CHAT_MODEL, name: 'fuzz target' } });
    const conversation = await gw.request('POST', '/api/llm/v1/chat', {
      token: adminJwt,
      json: { model: CHAT_MODEL, message: 'fuzz target' },
    });
    assert.equal(thread.status, 200, thread.text);
    assert.equal(assistant.status, 200, assistant.text);
    assert.equal(conversation.status, 200, conversation.text);
    assert.equal(workspace.status, 201, workspace.text);
    assert.equal(node.status, 201, node.text);
    assert.equal(collection.status, 201, collection.text);
    assert.equal(document.status, 202, document.text);
    fx = {
      tenantA: admin.tenantId,
      tenantB: throwaway.tenantId,
      apiKey,
      adminJwt,
      ids: {
        userId: (await seedUser(gw, throwaway.tenantId)).id,
        keyId: (await createApiKey(gw, throwaway.tenantId, 'throwaway')).id,
        workspaceId: workspace.body.id,
        collectionId: collection.body.id,
        documentId: document.body.id,
        nodeId: node.body.id,
        conversationId: conversation.body.conversationId,
        threadId: thread.body.id,
        messageId: messages.body.data[0].id,
        assistantId: assistant.body.id,
      },
      closedUrl,
      chatModel: CHAT_MODEL,
    };
  });
  after(async () => {
    await gw?.close();
    await Promise.all((engines ?? []).map((e) => e.close()));
  });

  it('answers every request without a 5xx, a stall, an oversized body or an error outside the problem shape', async () => {
    const { port } = new URL(gw.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const target = { host: '127.0.0.1', port: Number(port), agent };
    const failures = new Failures();
    // A first use costs once what no input can make it cost again: the tokenizer's tables
    // load after the first chat answer (a ~100 ms stall by design, more on a slow machine).
    // It is paid before the measurement: the bound is on what hostile input does.
    const warmUp = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: fx.apiKey,
      json: { model: CHAT_MODEL, messages: [{ role: 'user', content: 'warm up' }] },
    });
    assert.equal(warmUp.status, 200, warmUp.text);
    await import('gpt-tokenizer/encoding/o200k_base');
    const loop = monitorEventLoopDelay({ resolution: 10 });
    const stalls = new StallWatch(MAX_LOOP_DELAY_MS);
    const statuses = new Map<string, number>();
    const started = performance.now();
    loop.enable();
    try {
      await inParallel(generateCases(gw.app.routeTable, fx, new Rng(seed), REQUESTS), CONCURRENCY, async (c) => {
        stalls.inFlight.add(c);
        const answer = await send(target, c);
        stalls.inFlight.delete(c);
        const band = answer.status ? `${Math.floor(answer.status / 100)}xx` : 'none';
        statuses.set(band, (statuses.get(band) ?? 0) + 1);
        for (const [kind, detail] of check(c, answer)) failures.add(c, answer, kind, detail);
      });
    } finally {
      loop.disable();
      stalls.stop();
      agent.destroy();
    }
    const maxDelayMs = loop.max / 1e6;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const sent = [...statuses.values()].reduce((a, b) => a + b, 0);
    const bands = [...statuses]
      .sort()
      .map(([band, n]) => `${band} ${n}`)
      .join(', ');
    console.log(
      `fuzz: seed ${seed}, ${sent} requests (${bands}) in ${seconds} s, event loop max delay ${maxDelayMs.toFixed(0)} ms, ${failures.total} failing answers`,
    );
    const stalled = maxDelayMs > MAX_LOOP_DELAY_MS;
    // A stall in which the loop's own thread hardly ran is the machine's (2 busy cores),
    // not the gateway's: it is shown, and fails the test only where it cannot be told apart.
    if (stalled && stalls.onlyStarved()) console.log(`fuzz: the event loop was starved, not blocked:\n${stalls.report()}`);
    const problems = [
      ...(failures.distinct > 0 ? [failures.report(seed, EXAMPLES)] : []),
      ...(stalled && !stalls.onlyStarved()
        ? [`the event loop stalled for ${maxDelayMs.toFixed(0)} ms (at most ${MAX_LOOP_DELAY_MS}; seed ${seed}):\n${stalls.report()}`]
        : []),
    ];
    assert.equal(problems.length, 0, problems.join('\n'));
  });

  it('leaves the admin able to sign in and the API key working', async () => {
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

/** Runs `each` over the cases, `concurrency` at a time, taking them from the generator in order. */
async function inParallel(cases: Iterator<FuzzCase>, concurrency: number, each: (c: FuzzCase) => Promise<void>): Promise<void> {
  const worker = async () => {
    for (let next = cases.next(); !next.done; next = cases.next()) await each(next.value);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
