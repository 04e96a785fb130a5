// POST /api/llm/v1/chat/completions without `stream`: the spec's JSON answer (2.6),
// its defaults and bounds (2.5, 8), model resolution, 503s, usage records, and the
// security cases, against a real gateway in front of loopback fake engines.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countTextTokens } from '../../src/areas/llm/tokens/count.js';
import { seedTenant, seedUser, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver, usageRows } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const hello = [{ role: 'user', content: 'hello there' }];

describe('llm chat/completions (JSON)', () => {
  let gw: TestGateway;
  let main: FakeEngine;
  let silent: FakeEngine;
  let lonely: FakeEngine;
  let odd: FakeEngine;
  let tenantId: string, adminToken: string, key: string, memberToken: string;

  const lastChat = (fake: FakeEngine) => [...fake.requests].reverse().find((r) => r.path === '/v1/chat/completions')!;
  const chat = (json: unknown, credential: { apiKey?: string; token?: string } = { apiKey: key }) =>
    gw.request('POST', CHAT, { ...credential, json });

  before(async () => {
    main = await startFakeOpenAI({ models: ['alpha-model', 'beta-model'] });
    // Reports no usage: the gateway counts with its own tokenizer.
    silent = await startFakeOpenAI({ models: ['quiet-model'], noUsage: true });
    lonely = await startFakeOpenAI({ models: ['lonely-model'] });
    // Reports whatever usage a test sets (a misbehaving engine).
    odd = await startFakeOpenAI({ models: ['odd-usage-model'], reply: ODD_ANSWER });
    // Background writes only when a test flushes: the request path can be shown to do no database work.
    gw = await gatewayOver([main, silent, lonely, odd], { GATEWAY_USAGE_FLUSH_SECONDS: '3600', GATEWAY_LAST_USED_FLUSH_SECONDS: '3600' });
    const t = await seedTenant(gw, 'chat');
    tenantId = t.tenantId;
    adminToken = await tokenFor(gw, t.admin.id, tenantId);
    memberToken = await tokenFor(gw, (await seedUser(gw, tenantId)).id, tenantId);
    key = (await createApiKey(gw, tenantId, 'chat')).key;
  });
  after(async () => {
    await gw?.close();
    await Promise.all([main?.close(), silent?.close(), lonely?.close(), odd?.close()]);
  });

  it('answers in the spec shape with the defaults applied and `auto` resolved', async () => {
    const response = await chat({ messages: hello });
    assert.equal(response.status, 200, response.text);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.ok(response.headers.get('x-correlation-id'));
    const body = response.body;
    assert.deepEqual(Object.keys(body).sort(), [
      'choices',
      'created',
      'id',
      'model',
      'object',
      'rag_active',
      'rag_snippets',
      'rag_status',
      // The fake reports one, as OpenAI does: passed through (test/llm/chat-fields.test.ts).
      'system_fingerprint',
      'usage',
    ]);
    assert.match(body.id, /^chatcmpl-[A-Za-z0-9_-]{8,}$/);
    assert.equal(body.object, 'chat.completion');
    assert.ok(Number.isInteger(body.created) && Math.abs(body.created - Date.now() / 1000) < 60);
    // `auto` without a tenant default: the first available model, as listed by GET /models.
    assert.equal(body.model, 'alpha-model');
    assert.deepEqual(body.choices, [
      { index: 0, message: { role: 'assistant', content: 'Fake answer to: hello there' }, finish_reason: 'stop' },
    ]);
    // The fake's own counts (words), passed through.
    assert.deepEqual(body.usage, { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
    assert.equal(body.rag_snippets, null);
    assert.equal(body.rag_active, false);
    assert.equal(body.rag_status, 'inactive');

    const sent = lastChat(main).body;
    assert.equal(sent.model, 'alpha-model');
    assert.equal(sent.max_tokens, 1024);
    assert.equal(sent.temperature, 0.7);
    assert.equal(sent.stream, false);
    assert.deepEqual(sent.messages, hello);
  });

  it('passes explicit parameters through and reports a length cut-off', async () => {
    const response = await chat({
      model: 'beta-model',
      max_tokens: 3,
      temperature: 0,
      messages: [{ role: 'system', content: 'be brief' }, ...hello],
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.model, 'beta-model');
    assert.equal(response.body.choices[0].message.content, 'Fake answer to:');
    assert.equal(response.body.choices[0].finish_reason, 'length');
    assert.deepEqual(response.body.usage, { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
    const sent = lastChat(main).body;
    assert.equal(sent.model, 'beta-model');
    assert.equal(sent.max_tokens, 3);
    assert.equal(sent.temperature, 0);
    assert.deepEqual(
      sent.messages.map((m: { role: string }) => m.role),
      ['system', 'user'],
    );
  });

  it("resolves `auto` to the tenant's default model", async () => {
    const other = await seedTenant(gw, 'chat-default');
    const admin = await tokenFor(gw, other.admin.id, other.tenantId);
    const patched = await gw.request('PATCH', `/api/auth/tenants/${other.tenantId}`, {
      token: admin,
      json: { defaultModel: 'beta-model' },
    });
    assert.equal(patched.status, 200, patched.text);
    const response = await chat({ model: 'auto', messages: hello }, { token: admin });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.model, 'beta-model');
    assert.equal(lastChat(main).body.model, 'beta-model');
  });

  it('ignores unknown fields; without a grounding field the answer is ungrounded (test/os/grounding.test.ts grounds)', async () => {
    const response = await chat({ messages: hello, top_k: 5, best_of: 2 });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.rag_active, false);
    assert.equal(response.body.rag_status, 'inactive');
    assert.equal(response.body.rag_snippets, null);
    assert.equal(lastChat(main).body.top_k, undefined, 'unknown fields are not forwarded');
    assert.equal(lastChat(main).body.best_of, undefined, 'unknown fields are not forwarded');
  });

  it('rejects every out-of-bounds or malformed field with a 400 naming it, before any engine sees it', async () => {
    const cases: [unknown, string][] = [
      [{ messages: hello, max_tokens: 0 }, 'max_tokens'],
      [{ messages: hello, max_tokens: 8193 }, 'max_tokens'],
      [{ messages: hello, max_tokens: '5' }, 'max_tokens'],
      [{ messages: hello, max_tokens: 2.5 }, 'max_tokens'],
      [{ messages: hello, temperature: 'warm' }, 'temperature'],
      [{ messages: hello, temperature: -0.1 }, 'temperature'],
      [{ messages: hello, temperature: 2.01 }, 'temperature'],
      [{}, 'messages'],
      [{ messages: [] }, 'messages'],
      [{ messages: 'hello' }, 'messages'],
      [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
      [{ messages: [{ content: 'x' }] }, 'messages[0].role'],
      [{ messages: [...hello, { role: 'user', content: 42 }] }, 'messages[1].content'],
      [{ messages: [{ role: 'user' }] }, 'messages[0].content'],
      [{ messages: hello, model: '' }, 'model'],
      [{ messages: hello, model: 7 }, 'model'],
      [{ messages: hello, stream: 'yes' }, 'stream'],
      [{ messages: hello, stream_options: { include_usage: 'yes' } }, 'stream_options.include_usage'],
      [{ messages: hello, workspaceIds: 'ws_1' }, 'workspaceIds'],
      [{ messages: hello, collectionIds: [7] }, 'collectionIds[0]'],
      [{ messages: hello, ragScopes: {} }, 'ragScopes'],
    ];
    const before = main.chatRequests();
    for (const [json, field] of cases) {
      const response = await chat(json);
      assert.equal(response.status, 400, `${JSON.stringify(json)}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_FAILED');
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        `${JSON.stringify(json)} should name ${field}: ${JSON.stringify(response.body.errors)}`,
      );
    }
    const tooMany = await chat({ messages: Array.from({ length: 1001 }, () => ({ role: 'user', content: 'x' })) });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.errors[0].field, 'messages');
    assert.equal(main.chatRequests(), before, 'no invalid request reached an engine');
  });

  it('answers 400 naming `model` for a model no node serves', async () => {
    const response = await chat({ model: 'no-such-model', messages: hello });
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.code, 'VALIDATION_FAILED');
    assert.equal(response.body.errors[0].field, 'model');
  });

  it('maps an engine refusing the request to 400 and an overloaded engine to 503 with Retry-After', async () => {
    main.behaviour.status = 400;
    try {
      const refused = await chat({ model: 'alpha-model', messages: hello });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.code, 'BAD_REQUEST');
      assert.doesNotMatch(refused.text, /127\.0\.0\.1/, 'no node address leaks');
      main.behaviour.status = 503;
      const overloaded = await chat({ model: 'alpha-model', messages: hello });
      assert.equal(overloaded.status, 503, overloaded.text);
      assert.match(overloaded.headers.get('retry-after') ?? '', /^\d+$/);
    } finally {
      delete main.behaviour.status;
    }
    assert.equal((await chat({ model: 'alpha-model', messages: hello })).status, 200, 'one failure does not take the node out');
  });

  it('answers 503 with Retry-After when no healthy node serves the model, streaming or not', async () => {
    assert.equal((await chat({ model: 'lonely-model', messages: hello })).status, 200);
    await lonely.close();
    for (const stream of [false, true]) {
      const response = await chat({ model: 'lonely-model', messages: hello, stream });
      assert.equal(response.status, 503, `stream ${stream}: ${response.text}`);
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(response.body.code, 'SERVICE_UNAVAILABLE');
    }
    const rows = (await usageRows(gw, tenantId)).filter((r) => r.model === 'lonely-model' && r.status === 'unavailable');
    assert.ok(rows.length >= 2, 'the 503s are recorded as unavailable');
  });

  it('counts usage with a real tokenizer when the engine reports none', async () => {
    const response = await chat({ model: 'quiet-model', messages: hello });
    assert.equal(response.status, 200, response.text);
    const text = 'Fake answer to: hello there';
    assert.equal(response.body.choices[0].message.content, text);
    // OpenAI's chat accounting over o200k_base: 3 per message + role + content, 3 to prime the reply.
    const prompt = 3 + 3 + countTokens('user') + countTokens('hello there');
    const completion = countTokens(text);
    assert.deepEqual(response.body.usage, { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    assert.notEqual(completion, 5, 'not the word count');
  });

  it('counts with the tokenizer when the engine reports something that is not a token count, and records it', async () => {
    const prompt = 3 + 3 + countTokens('user') + countTokens('hello there');
    const completion = countTokens(ODD_ANSWER);
    for (const usage of [
      { prompt_tokens: 1.5, completion_tokens: -2 },
      { prompt_tokens: 3e10, completion_tokens: '7' },
    ]) {
      odd.behaviour.usage = usage;
      const response = await chat({ model: 'odd-usage-model', messages: hello });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.choices[0].message.content, ODD_ANSWER);
      assert.deepEqual(
        response.body.usage,
        { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
        JSON.stringify(usage),
      );
    }
    // Stored like any other record, and nothing it sent holds back the records behind it.
    const rows = (await usageRows(gw, tenantId)).filter((r) => r.model === 'odd-usage-model');
    assert.deepEqual(
      rows.map((r) => [r.prompt_tokens, r.completion_tokens]),
      [
        [prompt, completion],
        [prompt, completion],
      ],
    );
  });

  it('counts a huge one-word prompt without stalling the event loop (BPE is quadratic per word)', async () => {
    const response = await chat({ model: 'quiet-model', messages: [{ role: 'user', content: 'a'.repeat(200_000) }] });
    assert.equal(response.status, 200, response.text);
    assert.ok(response.body.usage.prompt_tokens > 1000, JSON.stringify(response.body.usage));
    // Why it does not stall, counted rather than timed: the word is counted in bounded
    // segments and the loop turns between them. A loop turn is a setImmediate callback;
    // counted at once, the whole word would let none run before the count is done.
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const word = 'a'.repeat(200_000);
    const tokens = await countTextTokens(word);
    counting = false;
    assert.ok(tokens > 1000, `${tokens} tokens`);
    assert.ok(turns >= 20, `the loop turned ${turns} times while a 200,000-letter word was counted`);
  });

  it('records usage per request off the request path', async () => {
    const other = await seedTenant(gw, 'chat-usage');
    const { key: otherKey, id: otherKeyId } = await createApiKey(gw, other.tenantId, 'usage');
    const byKey = await chat({ model: 'beta-model', messages: hello }, { apiKey: otherKey });
    const byUser = await chat(
      { model: 'alpha-model', messages: hello, max_tokens: 2 },
      { token: await tokenFor(gw, other.admin.id, other.tenantId) },
    );
    assert.equal(byKey.status, 200);
    assert.equal(byUser.status, 200);
    const rows = await usageRows(gw, other.tenantId);
    assert.equal(rows.length, 2);
    const [k, u] = rows;
    assert.equal(k.principal_kind, 'apiKey');
    assert.equal(k.principal_id, otherKeyId);
    assert.equal(k.endpoint, 'chat/completions');
    assert.equal(k.model, 'beta-model');
    assert.equal(k.node_id, gw.ctx.llm.nodes.nodes().find((n) => n.definition.name === 'fake-0')!.definition.id);
    assert.equal(k.stream, false);
    assert.equal(k.prompt_tokens, 2);
    assert.equal(k.completion_tokens, 5);
    assert.equal(k.status, 'ok');
    assert.equal(k.correlation_id, byKey.headers.get('x-correlation-id'));
    assert.ok(k.latency_ms >= 0);
    assert.equal(u.principal_kind, 'user');
    assert.equal(u.principal_id, other.admin.id);
    assert.equal(u.model, 'alpha-model');
    assert.equal(u.completion_tokens, 2);
  });

  it('does no database work for a cached request, JSON or streamed: its usage is written later, in a batch', async () => {
    assert.equal((await chat({ model: 'alpha-model', messages: hello })).status, 200); // the key and the tenant's settings are cached now
    const before = (await usageRows(gw, tenantId)).length;
    const queries = gw.ctx.db.stats.queries;
    for (const stream of [false, true, false, true]) {
      const response = await chat({ model: 'alpha-model', messages: hello, stream });
      assert.equal(response.status, 200, response.text);
    }
    assert.equal(gw.ctx.db.stats.queries, queries, 'no query on the request path');
    assert.equal((await usageRows(gw, tenantId)).length, before + 4);
    assert.equal(gw.ctx.db.stats.queries, queries + 2, 'one insert for the four records (and the read)');
  });

  it('stores a backlog of more than 500 usage entries once each, every value intact, through a failed write', async () => {
    const usage = gw.ctx.llm.usage;
    const backlogTenant = 'ten_usage_backlog';
    const at = new Date('2025-01-02T03:04:05.678Z');
    // Text an array literal or a parameter list must carry as is: quotes, backslashes, commas, braces, the word NULL.
    const awkward = ['plain', 'with "quotes"', "it's", 'back\\slash', 'a,b', '{braces}', 'NULL', '', 'ünïcode ✓'];
    const entries = Array.from({ length: 1234 }, (_, i) => ({
      tenantId: backlogTenant,
      principalKind: i % 2 === 0 ? ('apiKey' as const) : ('user' as const),
      principalId: `p${i}`,
      customerId: i % 3 === 0 ? undefined : `cus_${i}`,
      endpoint: 'chat/completions',
      model: awkward[i % awkward.length]!,
      nodeId: i % 5 === 0 ? null : `node_${i}`,
      stream: i % 4 === 0,
      promptTokens: i,
      completionTokens: 2 * i,
      latencyMs: i + 0.6,
      status: i % 7 === 0 ? 'client_closed' : 'ok',
      correlationId: i % 6 === 0 ? undefined : `corr-${i}`,
      at: new Date(at.getTime() + i),
    }));

    // The database refuses one row late in the backlog: what came before it is stored,
    // the rest is kept, and no request starts a write of its own against the failing database.
    await gw.ctx.db.query(`CREATE FUNCTION usage_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.principal_id = 'p1100' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$`);
    await gw.ctx.db.query(
      'CREATE TRIGGER usage_test_refuse BEFORE INSERT ON usage_records FOR EACH ROW EXECUTE FUNCTION usage_test_refuse()',
    );
    try {
      const queries = gw.ctx.db.stats.queries;
      for (const entry of entries) usage.record({ ...entry });
      await usage.flush();
      for (const entry of entries.slice(0, 600)) usage.record({ ...entry, tenantId: 'ten_usage_later' });
      assert.ok(gw.ctx.db.stats.queries - queries <= 4, `${gw.ctx.db.stats.queries - queries} statements for 1,834 entries`);
      assert.ok((await usageRows(gw, backlogTenant)).length < entries.length, 'the refused row and those after it wait');
    } finally {
      await gw.ctx.db.query('DROP TRIGGER usage_test_refuse ON usage_records');
      await gw.ctx.db.query('DROP FUNCTION usage_test_refuse');
    }
    const rows = await usageRows(gw, backlogTenant);
    assert.equal(rows.length, entries.length, 'each entry stored exactly once');
    assert.equal((await usageRows(gw, 'ten_usage_later')).length, 600);
    rows.sort((a, b) => Number(a.principal_id.slice(1)) - Number(b.principal_id.slice(1)));
    for (const [i, e] of entries.entries()) {
      const row = rows[i];
      const expected = {
        principal_kind: e.principalKind,
        principal_id: e.principalId,
        customer_id: e.customerId ?? null,
        endpoint: e.endpoint,
        model: e.model,
        node_id: e.nodeId,
        stream: e.stream,
        prompt_tokens: e.promptTokens,
        completion_tokens: e.completionTokens,
        latency_ms: i + 1,
        status: e.status,
        correlation_id: e.correlationId ?? null,
        created_at: e.at.toISOString(),
      };
      assert.deepEqual({ ...pick(row, Object.keys(expected)), created_at: row.created_at.toISOString() }, expected, `entry ${i}`);
    }
  });

  it('drops and counts a usage entry the database refuses for its values; every other entry of the batch is stored', async () => {
    const usage = gw.ctx.llm.usage;
    const refusedTenant = 'ten_usage_refused';
    const entries = Array.from({ length: 300 }, (_, i) => ({
      tenantId: refusedTenant,
      principalKind: 'apiKey' as const,
      principalId: `p${i}`,
      endpoint: 'chat/completions',
      model: 'm',
      nodeId: null,
      stream: false,
      promptTokens: i,
      completionTokens: 0,
      latencyMs: 1,
      status: 'ok',
    }));
    // Two values the database refuses: a kind its CHECK constraint does not allow (23514), and a NUL in a text (22021).
    (entries[123] as { principalKind: string }).principalKind = 'robot';
    entries[200]!.model = 'bad\u0000model';
    const refusedBefore = usage.refused;
    for (const entry of entries) usage.record(entry);
    await usage.flush();
    assert.equal(usage.refused - refusedBefore, 2);
    const stored = (await usageRows(gw, refusedTenant)).map((row) => row.principal_id as string);
    assert.deepEqual(new Set(stored), new Set(entries.map((e) => e.principalId).filter((id) => id !== 'p123' && id !== 'p200')));
    assert.equal(stored.length, 298, 'each stored once');
    // Nothing is held back: the next entries go out with the next flush.
    usage.record({ ...entries[0]!, principalId: 'after' });
    await usage.flush();
    assert.equal((await usageRows(gw, refusedTenant)).length, 299);
  });

  it('needs a valid credential: API keys and JWTs work, missing and revoked keys get 401, malformed JSON 400', async () => {
    assert.equal((await chat({ messages: hello }, { token: memberToken })).status, 200);
    assert.equal((await chat({ messages: hello }, { token: adminToken })).status, 200);
    const bearerKey = await gw.request('POST', CHAT, { headers: { authorization: `Bearer ${key}` }, json: { messages: hello } });
    assert.equal(bearerKey.status, 200);

    const none = await chat({ messages: hello }, {});
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'UNAUTHENTICATED');

    const { key: doomed, id: doomedId } = await createApiKey(gw, tenantId, 'doomed');
    assert.equal((await chat({ messages: hello }, { apiKey: doomed })).status, 200);
    const revoked = await gw.request('POST', `/api/auth/tenants/${tenantId}/api-keys/${doomedId}/revoke`, { token: adminToken });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await chat({ messages: hello }, { apiKey: doomed })).status, 401);

    const malformed = await gw.request('POST', CHAT, {
      apiKey: key,
      body: '{"messages": [',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.code, 'BAD_REQUEST');
  });

  it('never logs prompts or completions', async () => {
    const secret = 'zebra-quokka-prompt-marker';
    const response = await chat({ messages: [{ role: 'user', content: secret }] });
    assert.equal(response.status, 200);
    assert.match(response.body.choices[0].message.content, new RegExp(secret));
    assert.doesNotMatch(gw.logs(), new RegExp(secret));
  });
});

function pick(row: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, row[k]]));
}

const ODD_ANSWER = 'An answer with odd counts';
