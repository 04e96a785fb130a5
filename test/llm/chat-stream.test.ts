// chat/completions with `stream: true` (spec 6.1): headers, the exact frame order,
// the opt-ins (usage frame, `choices` on the metadata frame), heartbeats while the
// engine is silent, mid-stream engine death, cancellation seen at the upstream
// (before the first token, while streaming, and for JSON answers), backpressure.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { seedTenant, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { deltasOf, gatewayOver, openStream, payloads, post, usageRows, type OpenStream } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const hello = [{ role: 'user', content: 'hello there' }];
const METADATA = '{"object":"rag_metadata","active":false,"status":"inactive","snippet_count":0,"rag_snippets":null}';

describe('llm chat/completions (stream)', () => {
  let gw: TestGateway;
  let main: FakeEngine;
  let slow: FakeEngine;
  let dying: FakeEngine;
  let big: FakeEngine;
  let quiet: FakeEngine;
  let tenantId: string, key: string;

  const stream = (json: object, headers: Record<string, string> = { 'x-api-key': key }) =>
    openStream(gw, CHAT, { stream: true, messages: hello, ...json }, headers);
  const dataItems = (s: OpenStream) => s.items.filter((i) => 'data' in i);

  before(async () => {
    main = await startFakeOpenAI({ models: ['stream-model'] });
    slow = await startFakeOpenAI({ models: ['slow-model'] });
    dying = await startFakeOpenAI({ models: ['dying-model'], dieAfterTokens: 2 });
    big = await startFakeOpenAI({ models: ['big-model'] });
    quiet = await startFakeOpenAI({ models: ['quiet-model'], noUsage: true });
    // Heartbeats every second, so a test can see one without waiting 15 s.
    gw = await gatewayOver([main, slow, dying, big, quiet], { GATEWAY_STREAM_HEARTBEAT_SECONDS: '1' });
    const t = await seedTenant(gw, 'stream');
    tenantId = t.tenantId;
    key = (await createApiKey(gw, tenantId, 'stream')).key;
  });
  after(async () => {
    await gw?.close();
    await Promise.all([main, slow, dying, big, quiet].map((f) => f?.close()));
  });

  it('sends the event-stream headers and the frames in the spec order', async () => {
    const s = await stream({ model: 'stream-model' });
    assert.equal(s.status, 200);
    assert.equal(s.headers['content-type'], 'text/event-stream');
    assert.equal(s.headers['cache-control'], 'no-cache');
    assert.equal(s.headers['x-accel-buffering'], 'no');
    assert.equal(s.headers.connection, 'keep-alive');
    assert.ok(s.headers['x-correlation-id']);
    await s.end();
    const items = dataItems(s) as { data: string }[];
    // 1: the metadata frame exactly as the spec shows it, without `choices`.
    assert.equal(items[0]!.data, METADATA);
    const frames = payloads(s.items);
    const [, ...rest] = frames;
    const done = rest.pop();
    const final = rest.pop();
    assert.equal(done, '[DONE]', 'the literal terminator is last');
    // 2..n: deltas; the first names the role, none has a finish reason.
    assert.ok(rest.length >= 2);
    for (const [i, f] of rest.entries()) {
      assert.match(f.id, /^chatcmpl-/);
      assert.equal(f.id, rest[0].id);
      assert.equal(f.object, 'chat.completion.chunk');
      assert.equal(f.model, 'stream-model');
      assert.ok(Number.isInteger(f.created));
      assert.equal(f.choices.length, 1);
      assert.equal(f.choices[0].index, 0);
      assert.equal(f.choices[0].finish_reason, null);
      assert.deepEqual(Object.keys(f.choices[0].delta), i === 0 ? ['role', 'content'] : ['content']);
      if (i === 0) assert.equal(f.choices[0].delta.role, 'assistant');
    }
    assert.equal(deltasOf(rest), 'Fake answer to: hello there');
    // n+1: empty content, finish_reason stop; no usage frame without include_usage.
    assert.deepEqual(final.choices, [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }]);
    assert.equal(final.id, rest[0].id);
    assert.ok(frames.every((f) => f === '[DONE]' || f.usage === undefined));
  });

  it('adds the usage frame before [DONE] only with stream_options.include_usage', async () => {
    const s = await stream({ model: 'stream-model', stream_options: { include_usage: true } });
    const frames = payloads(await s.end());
    assert.equal(frames.at(-1), '[DONE]');
    const usage = frames.at(-2);
    assert.deepEqual(usage.choices, []);
    assert.deepEqual(usage.usage, { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
    assert.equal(usage.object, 'chat.completion.chunk');
    assert.equal(frames.at(-3).choices[0].finish_reason, 'stop');
    assert.equal((dataItems(s)[0] as { data: string }).data, METADATA, 'include_usage alone keeps the spec metadata frame');
  });

  it('adds `choices: []` to the metadata frame on request, or by tenant setting (the request wins)', async () => {
    const withChoices = await stream({ model: 'stream-model', stream_options: { metadata_choices: true } });
    const first = payloads(await withChoices.end())[0];
    assert.deepEqual(first, { ...JSON.parse(METADATA), choices: [] });

    const other = await seedTenant(gw, 'stream-optin');
    const admin = await tokenFor(gw, other.admin.id, other.tenantId);
    const patched = await gw.request('PATCH', `/api/auth/tenants/${other.tenantId}`, {
      token: admin,
      json: { streamMetadataChoices: true },
    });
    assert.equal(patched.status, 200, patched.text);
    const byTenant = await stream({ model: 'stream-model' }, { authorization: `Bearer ${admin}` });
    assert.deepEqual(payloads(await byTenant.end())[0].choices, []);
    const optedOut = await stream(
      { model: 'stream-model', stream_options: { metadata_choices: false } },
      { authorization: `Bearer ${admin}` },
    );
    await optedOut.end();
    assert.equal((dataItems(optedOut)[0] as { data: string }).data, METADATA);
  });

  it('sends each stream_options.metadata_frame mode exactly, every other frame unchanged', async () => {
    const run = async (json: object) => {
      const s = await stream({ model: 'stream-model', ...json });
      await s.end();
      return (dataItems(s) as { data: string }[]).map((i) => i.data);
    };
    const [specMeta, ...specRest] = await run({ stream_options: { metadata_frame: 'spec' } });
    assert.equal(specMeta, METADATA);
    const [emptyMeta, ...emptyRest] = await run({ stream_options: { metadata_frame: 'empty_choices' } });
    assert.equal(emptyMeta, METADATA.replace(/}$/, ',"choices":[]}'));
    const [chunkMeta, ...chunkRest] = await run({ stream_options: { metadata_frame: 'chunk' } });
    const { id, created } = JSON.parse(chunkRest[0]!);
    assert.equal(
      chunkMeta,
      `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":"stream-model",` +
        '"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],' +
        '"rag_active":false,"rag_status":"inactive","rag_snippet_count":0,"rag_snippets":null}',
    );
    // The frames after the metadata frame are the same in every mode, but for the stream's id and time.
    const normalised = (frames: string[]) =>
      frames.map((f) => f.replace(/"id":"[^"]+","object"/, '"id":"X","object"').replace(/"created":\d+/, '"created":0'));
    assert.deepEqual(normalised(emptyRest), normalised(specRest));
    assert.deepEqual(normalised(chunkRest), normalised(specRest));
  });

  it("takes the request's metadata_frame over the tenant's streamMetadataFrame, metadata_choices as its alias", async () => {
    const other = await seedTenant(gw, 'stream-frame');
    const admin = await tokenFor(gw, other.admin.id, other.tenantId);
    const auth = { authorization: `Bearer ${admin}` };
    const setTenant = async (json: object) => {
      const patched = await gw.request('PATCH', `/api/auth/tenants/${other.tenantId}`, { token: admin, json });
      assert.equal(patched.status, 200, patched.text);
    };
    const firstFrame = async (json: object) => {
      const s = await stream({ model: 'stream-model', ...json }, auth);
      await s.end();
      return JSON.parse((dataItems(s)[0] as { data: string }).data);
    };
    const modeOf = (frame: any) =>
      frame.object === 'chat.completion.chunk' ? 'chunk' : Array.isArray(frame.choices) ? 'empty_choices' : 'spec';

    assert.equal(modeOf(await firstFrame({})), 'spec', 'the default');
    await setTenant({ streamMetadataFrame: 'chunk' });
    assert.equal(modeOf(await firstFrame({})), 'chunk');
    assert.equal(modeOf(await firstFrame({ stream_options: { include_usage: true } })), 'chunk');
    assert.equal(modeOf(await firstFrame({ stream_options: { metadata_frame: 'spec' } })), 'spec');
    assert.equal(modeOf(await firstFrame({ stream_options: { metadata_frame: 'empty_choices' } })), 'empty_choices');
    assert.equal(modeOf(await firstFrame({ stream_options: { metadata_choices: true } })), 'empty_choices');
    assert.equal(modeOf(await firstFrame({ stream_options: { metadata_choices: false } })), 'spec');
    assert.equal(
      modeOf(await firstFrame({ stream_options: { metadata_choices: true, metadata_frame: 'chunk' } })),
      'chunk',
      'metadata_frame wins over its alias',
    );
    await setTenant({ streamMetadataFrame: 'empty_choices' });
    assert.equal(modeOf(await firstFrame({})), 'empty_choices');
    assert.equal(modeOf(await firstFrame({ stream_options: { metadata_frame: 'chunk' } })), 'chunk');
    await setTenant({ streamMetadataChoices: false });
    assert.equal(modeOf(await firstFrame({})), 'spec');
  });

  it('refuses a metadata_frame it does not know with 400 naming the field', async () => {
    for (const value of ['choices', '', 1, true, null]) {
      const response = await gw.request('POST', CHAT, {
        apiKey: key,
        json: { model: 'stream-model', stream: true, messages: hello, stream_options: { metadata_frame: value } },
      });
      assert.equal(response.status, 400, JSON.stringify(value));
      assert.equal(response.body.errors[0].field, 'stream_options.metadata_frame', response.text);
    }
  });

  it('counts a streamed answer with the tokenizer when the engine reports no usage, a long one included', async () => {
    const words = Array.from({ length: 50 }, (_, i) => `word${i}${'abcdefghij'.repeat(3)}`).join(' ');
    // 8,192 words of ~36 characters: ~300 KB, more than the gateway keeps before counting what it has.
    quiet.behaviour = { models: ['quiet-model'], noUsage: true, reply: words, repeat: 200 };
    for (const maxTokens of [5, 8192]) {
      const s = await stream({ model: 'quiet-model', max_tokens: maxTokens, stream_options: { include_usage: true } });
      const frames = payloads(await s.end(30_000));
      const text = deltasOf(frames);
      assert.equal(text.split(' ').length, maxTokens);
      const prompt = 3 + 3 + countTokens('user') + countTokens('hello there');
      const completion = countTokens(text);
      assert.deepEqual(
        frames.at(-2).usage,
        { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
        `max_tokens ${maxTokens}`,
      );
    }
    const [row] = (await usageRows(gw, tenantId)).filter((r) => r.model === 'quiet-model' && r.completion_tokens > 1000);
    assert.ok(row, 'the long answer is recorded with its counted tokens');
  });

  it("reports the engine's length cut-off in the final frame", async () => {
    const s = await stream({ model: 'stream-model', max_tokens: 2 });
    const frames = payloads(await s.end());
    assert.equal(deltasOf(frames), 'Fake answer');
    assert.equal(frames.at(-2).choices[0].finish_reason, 'length');
    assert.equal(main.requests.at(-1)!.body.max_tokens, 2);
    assert.equal(main.requests.at(-1)!.body.temperature, 0.7);
  });

  it('names the role on the final frame when the engine generates no text at all', async () => {
    main.behaviour.reply = '';
    try {
      const frames = payloads(await (await stream({ model: 'stream-model' })).end());
      assert.equal(frames.length, 3, JSON.stringify(frames));
      assert.deepEqual(frames[1].choices, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }]);
      assert.equal(frames[2], '[DONE]');
    } finally {
      delete main.behaviour.reply;
    }
  });

  it('sends `:` heartbeat comments while the engine is silent', async () => {
    slow.behaviour = { models: ['slow-model'], silentMs: 2500 };
    try {
      const s = await stream({ model: 'slow-model' });
      await s.end();
      const firstDelta = s.items.findIndex((i) => 'data' in i && i.data.includes('chat.completion.chunk'));
      const comments = s.items.slice(0, firstDelta).filter((i) => 'comment' in i);
      assert.ok(comments.length >= 1, `a heartbeat before the first delta: ${JSON.stringify(s.items.slice(0, 4))}`);
      assert.deepEqual(comments[0], { comment: 'keep-alive' });
      assert.equal(deltasOf(payloads(s.items)), 'Fake answer to: hello there', 'clients ignore the comments');
    } finally {
      slow.behaviour = { models: ['slow-model'] };
    }
  });

  it('ends with an in-band error frame and [DONE] when the engine dies mid-stream', async () => {
    const s = await stream({ model: 'dying-model' });
    const frames = payloads(await s.end(5000));
    assert.equal(frames.at(-1), '[DONE]');
    const error = frames.at(-2);
    assert.deepEqual(Object.keys(error), ['error']);
    assert.equal(typeof error.error.message, 'string');
    assert.equal(error.error.type, 'server_error');
    assert.equal(error.error.code, 'engine_error');
    assert.equal(deltasOf(frames), 'Fake answer', 'what came before the failure was relayed');
    assert.ok(!frames.some((f) => f !== '[DONE]' && f.choices?.[0]?.finish_reason), 'no final frame: the answer is incomplete');
    assert.equal(dying.chatRequests(), 1, 'nothing is retried after the first byte');
  });

  it('cancels the upstream within a second when the client leaves before the first token', async () => {
    // Headers sent, engine silent: the client sees the metadata frame, then leaves.
    slow.behaviour = { models: ['slow-model'], silentMs: 30_000 };
    try {
      const s = await stream({ model: 'slow-model' });
      await s.until((items) => items.length >= 1);
      const aborted = slow.aborted();
      s.destroy();
      await slow.waitForAbort(aborted + 1, 1000);

      // The engine has not even answered with headers: the client leaves during dispatch.
      slow.behaviour = { models: ['slow-model'], hang: true };
      const before = slow.chatRequests();
      const pending = post(gw, CHAT, { stream: true, model: 'slow-model', messages: hello }, { 'x-api-key': key });
      await eventually('the engine to receive the request', () => slow.chatRequests() > before);
      pending.destroy();
      await slow.waitForAbort(aborted + 2, 1000);
    } finally {
      slow.behaviour = { models: ['slow-model'] };
    }
  });

  it('cancels the upstream within a second when the client leaves while tokens stream', async () => {
    slow.behaviour = { models: ['slow-model'], tokenDelayMs: 50, repeat: 200 };
    try {
      const s = await stream({ model: 'slow-model' });
      await s.until((items) => payloads(items).filter((f) => f.object === 'chat.completion.chunk').length >= 3);
      const aborted = slow.aborted();
      s.destroy();
      await slow.waitForAbort(aborted + 1, 1000);
    } finally {
      slow.behaviour = { models: ['slow-model'] };
    }
  });

  it('cancels the upstream within a second when the client of a JSON answer leaves', async () => {
    slow.behaviour = { models: ['slow-model'], hang: true };
    try {
      const before = slow.chatRequests();
      const aborted = slow.aborted();
      const pending = post(gw, CHAT, { model: 'slow-model', messages: hello }, { 'x-api-key': key });
      await eventually('the engine to receive the request', () => slow.chatRequests() > before);
      pending.destroy();
      await slow.waitForAbort(aborted + 1, 1000);
    } finally {
      slow.behaviour = { models: ['slow-model'] };
    }
    await eventually('the usage record', async () =>
      (await usageRows(gw, tenantId)).some((r) => r.status === 'client_closed' && r.stream === false),
    );
  });

  it('stalls the engine while the client does not read, and finishes when it reads again', async () => {
    const tokenChars = 16 * 1024;
    const tokens = 4096;
    big.behaviour = { models: ['big-model'], reply: 'x'.repeat(tokenChars), repeat: tokens };
    const s = await stream({ model: 'big-model', max_tokens: tokens });
    await s.until((items) => items.length >= 3);
    s.res.pause();
    // Once every buffer on the way is full, the engine's writes stop.
    const last = await big.untilStalled(250);
    const total = tokens * (tokenChars + 120);
    assert.ok(last < total / 3, `the engine stalled after ${last} of ~${total} bytes`);
    const memory = process.memoryUsage().rss;
    await new Promise((resolve) => setTimeout(resolve, 500));
    // On a loaded machine a quiet spell can come before every buffer is full (4.6 MB more
    // was seen once): what counts is that the engine stalls again, the rest (tens of MB) unsent.
    const settled = await big.untilStalled(250);
    assert.ok(settled < total / 3, `still stalled: the engine stopped at ${settled} of ~${total} bytes`);
    assert.ok(process.memoryUsage().rss - memory < 64 * 1024 * 1024, 'the gateway does not buffer the rest');
    s.res.resume();
    const frames = payloads(await s.end(60_000));
    assert.equal(frames.at(-1), '[DONE]');
    assert.equal(frames.at(-2).choices[0].finish_reason, 'stop');
    assert.equal(deltasOf(frames).length, tokens * (tokenChars + 1) - 1);
  });

  it('records streamed usage, including streams the client cut short', async () => {
    const rows = await usageRows(gw, tenantId);
    const ok = rows.filter((r) => r.stream === true && r.status === 'ok' && r.model === 'stream-model');
    assert.ok(ok.length >= 3);
    assert.ok(ok.some((r) => r.prompt_tokens === 2 && r.completion_tokens === 5));
    assert.ok(rows.some((r) => r.stream === true && r.status === 'client_closed' && r.model === 'slow-model'));
    const failed = rows.find((r) => r.status === 'engine_error' && r.model === 'dying-model');
    assert.ok(failed, 'mid-stream death recorded');
    assert.ok(failed.completion_tokens >= 1, 'what was streamed is counted');
  });
});
