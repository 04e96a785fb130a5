// The persisted chat streamed (chat/completions' frames, spec 6.1, with the
// conversation's ids on the metadata frame), and every way a turn ends early: the
// client leaving, the engine dying mid-answer, the engine failing before it answers
// (still a plain HTTP problem), a second turn while one is generating, shutdown.
// Whatever happens, the user's message is kept and the assistant's is stored once,
// incomplete with what it had, never left in_progress.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { deltasOf, gatewayOver, openStream, payloads, post } from './chat-support.js';
import { CHAT, CONVERSATIONS, storedItems, storedRun, storeRows } from './conversations-support.js';

const METADATA_FIELDS = ['object', 'active', 'status', 'snippet_count', 'rag_snippets', 'conversationId', 'messageId'];

describe('persisted chat: streaming and turns cut short', () => {
  let gw: TestGateway;
  let main: FakeEngine;
  let slow: FakeEngine;
  let world: World;
  let token: string;

  const stream = (json: Record<string, unknown>) =>
    openStream(gw, CHAT, { model: 'stream-model', stream: true, ...json }, { authorization: `Bearer ${token}` });
  const chat = (json: Record<string, unknown>) => gw.request('POST', CHAT, { token, json: { model: 'stream-model', ...json } });
  const messagesOf = async (conversationId: string) =>
    (await gw.request('GET', `${CONVERSATIONS}/${conversationId}`, { token })).body.messages.data as any[];
  /** Waits until no reply of the conversation is being generated any more. */
  const settled = (conversationId: string) =>
    eventually('the turn to be stored', async () => (await storedItems(gw, conversationId)).every((i) => i.status !== 'in_progress'));

  before(async () => {
    main = await startFakeOpenAI({ models: ['stream-model'] });
    slow = await startFakeOpenAI({ models: ['slow-model'] });
    gw = await gatewayOver([main, slow], { GATEWAY_STREAM_HEARTBEAT_SECONDS: '1' });
    world = await seedWorld(gw, 'conv-stream');
    token = world.a.member.token;
  });
  afterEach(() => {
    main.behaviour = { models: ['stream-model'] };
    slow.behaviour = { models: ['slow-model'] };
  });
  after(async () => {
    await gw?.close();
    await Promise.all([main, slow].map((f) => f?.close()));
  });

  it("sends chat/completions' frames in the spec order, with conversationId and messageId on the metadata frame", async () => {
    const s = await stream({ message: 'hello there' });
    assert.equal(s.status, 200);
    assert.equal(s.headers['content-type'], 'text/event-stream');
    assert.equal(s.headers['x-accel-buffering'], 'no');
    assert.ok(s.headers['x-correlation-id']);
    const frames = payloads(await s.end());
    const [metadata, ...rest] = frames;
    assert.deepEqual(Object.keys(metadata), METADATA_FIELDS);
    assert.deepEqual(
      { ...metadata, conversationId: undefined, messageId: undefined },
      {
        object: 'rag_metadata',
        active: false,
        status: 'inactive',
        snippet_count: 0,
        rag_snippets: null,
        conversationId: undefined,
        messageId: undefined,
      },
    );
    assert.match(metadata.conversationId, /^conv_/);
    assert.match(metadata.messageId, /^msg_/);
    assert.equal(s.headers['x-conversation-id'], metadata.conversationId);
    assert.equal(rest.pop(), '[DONE]');
    const final = rest.pop();
    assert.equal(final.choices[0].finish_reason, 'stop');
    assert.deepEqual(final.choices[0].delta, { content: '' });
    assert.equal(rest[0].choices[0].delta.role, 'assistant');
    for (const f of rest) {
      assert.equal(f.object, 'chat.completion.chunk');
      assert.equal(f.model, 'stream-model');
      assert.equal(f.choices[0].finish_reason, null);
    }
    assert.equal(deltasOf(rest), 'Fake answer to: hello there');

    const [user, assistant] = await messagesOf(metadata.conversationId);
    assert.deepEqual([user.role, user.content, user.status], ['user', 'hello there', 'completed']);
    assert.equal(assistant.id, metadata.messageId);
    assert.deepEqual([assistant.content, assistant.status], ['Fake answer to: hello there', 'completed']);

    // Continued by stream too: the metadata frame names the same conversation and the new message.
    const again = await stream({ message: 'and again', conversationId: metadata.conversationId });
    const [next] = payloads(await again.end());
    assert.equal(next.conversationId, metadata.conversationId);
    assert.notEqual(next.messageId, metadata.messageId);
    assert.equal((await messagesOf(metadata.conversationId)).length, 4);
  });

  it('honours stream_options.include_usage and metadata_choices, and the tenant default for the latter', async () => {
    const frames = payloads(await (await stream({ message: 'hi', stream_options: { include_usage: true, metadata_choices: true } })).end());
    assert.deepEqual(frames[0].choices, []);
    const usage = frames.at(-2);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.total_tokens, usage.usage.prompt_tokens + usage.usage.completion_tokens);
    assert.ok(usage.usage.completion_tokens > 0);

    const patched = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, {
      token: world.a.admin.token,
      json: { streamMetadataChoices: true },
    });
    assert.equal(patched.status, 200, patched.text);
    try {
      await eventually('the tenant setting', async () => {
        const [metadata] = payloads(await (await stream({ message: 'hi' })).end());
        return Array.isArray(metadata.choices);
      });
      const [metadata] = payloads(await (await stream({ message: 'hi', stream_options: { metadata_choices: false } })).end());
      assert.equal(metadata.choices, undefined, 'the request wins over the tenant');
    } finally {
      await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, {
        token: world.a.admin.token,
        json: { streamMetadataChoices: false },
      });
    }
  });

  it('sends the metadata frame in each stream_options.metadata_frame mode, the ids in each', async () => {
    const [spec] = payloads(await (await stream({ message: 'hi', stream_options: { metadata_frame: 'spec' } })).end());
    assert.deepEqual(Object.keys(spec), METADATA_FIELDS);
    const [empty] = payloads(await (await stream({ message: 'hi', stream_options: { metadata_frame: 'empty_choices' } })).end());
    assert.deepEqual(Object.keys(empty), [...METADATA_FIELDS, 'choices']);
    assert.deepEqual(empty.choices, []);
    const frames = payloads(await (await stream({ message: 'hi', stream_options: { metadata_frame: 'chunk' } })).end());
    const [chunk, firstDelta] = frames;
    assert.deepEqual(chunk, {
      id: firstDelta.id,
      object: 'chat.completion.chunk',
      created: firstDelta.created,
      model: 'stream-model',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      rag_active: false,
      rag_status: 'inactive',
      rag_snippet_count: 0,
      rag_snippets: null,
      conversationId: chunk.conversationId,
      messageId: chunk.messageId,
    });
    assert.match(chunk.conversationId, /\S/);
    assert.match(chunk.messageId, /\S/);
    assert.equal((await messagesOf(chunk.conversationId)).at(-1).id, chunk.messageId);
    assert.ok(frames.every((f) => f === '[DONE]' || (f.object === 'chat.completion.chunk' && f.choices.length === 1)));
  });

  it('stores a reply whose client left mid-stream once, incomplete, with what had been generated', async () => {
    slow.behaviour = { models: ['slow-model'], tokenDelayMs: 30, repeat: 200 };
    const s = await stream({ model: 'slow-model', message: 'tell me a long story' });
    await s.until((items) => payloads(items).filter((f) => f.object === 'chat.completion.chunk').length >= 3);
    const { conversationId, messageId } = payloads(s.items)[0];
    const aborted = slow.aborted();
    s.destroy();
    await slow.waitForAbort(aborted + 1, 2000);
    await settled(conversationId);

    const items = await storedItems(gw, conversationId);
    assert.deepEqual(
      items.map((i) => i.role),
      ['user', 'assistant'],
      'exactly one assistant message',
    );
    const answer = items[1];
    assert.equal(answer.id, messageId);
    assert.equal(answer.status, 'incomplete');
    assert.equal(answer.incomplete_reason, 'client_disconnected');
    assert.ok(answer.content.length > 0, 'what was generated is kept');
    assert.ok('Fake answer to: tell me a long story '.repeat(200).startsWith(answer.content), answer.content);
    const run = await storedRun(gw, answer.run_id);
    assert.equal(run.status, 'incomplete');
    assert.deepEqual(run.incomplete_details, { reason: 'client_disconnected' });
    // The conversation takes the next turn, and the model sees the cut answer as it was.
    const next = await chat({ message: 'go on', conversationId });
    assert.equal(next.status, 200, next.text);
    assert.deepEqual(main.requests.at(-1)!.body.messages.slice(1), [
      { role: 'assistant', content: answer.content },
      { role: 'user', content: 'go on' },
    ]);
  });

  it('stores the reply of a JSON client that left as incomplete too', async () => {
    slow.behaviour = { models: ['slow-model'], tokenDelayMs: 30, repeat: 200 };
    const rows = await storeRows(gw);
    const calls = slow.chatRequests();
    const aborted = slow.aborted();
    const pending = post(gw, CHAT, { model: 'slow-model', message: 'a JSON story' }, { authorization: `Bearer ${token}` });
    await eventually('the engine to receive the request', () => slow.chatRequests() > calls);
    pending.destroy();
    await slow.waitForAbort(aborted + 1, 2000);
    const [conversation] = await gw.ctx.db.query<{ id: string }>('SELECT id FROM conversations ORDER BY created_at DESC LIMIT 1');
    await settled(conversation!.id);
    assert.deepEqual(await storeRows(gw), { conversations: rows.conversations + 1, items: rows.items + 2, runs: rows.runs + 1 });
    const [, answer] = await storedItems(gw, conversation!.id);
    assert.deepEqual([answer.status, answer.incomplete_reason], ['incomplete', 'client_disconnected']);
  });

  it('ends with an in-band error frame when the engine dies mid-stream, the reply stored incomplete', async () => {
    main.behaviour = { models: ['stream-model'], dieAfterTokens: 2 };
    const s = await stream({ message: 'hello there' });
    assert.equal(s.status, 200);
    const frames = payloads(await s.end(5000));
    assert.equal(frames.at(-1), '[DONE]');
    const { error } = frames.at(-2);
    assert.equal(error.type, 'server_error');
    assert.equal(error.code, 'engine_error');
    assert.match(error.message, /incomplete/);
    assert.equal(deltasOf(frames), 'Fake answer');
    assert.ok(!frames.some((f) => f !== '[DONE]' && f.choices?.[0]?.finish_reason), 'no final frame');

    const { conversationId } = frames[0];
    const [user, assistant] = await messagesOf(conversationId);
    assert.equal(user.status, 'completed');
    assert.deepEqual([assistant.status, assistant.incompleteReason, assistant.content], ['incomplete', 'run_failed', 'Fake answer']);
  });

  it('answers 503 with Retry-After when the engine fails before answering, JSON or stream: the message kept, the reply incomplete', async () => {
    const started = await chat({ message: 'first' });
    const conversationId = started.body.conversationId;
    assert.equal(started.headers.get('x-conversation-id'), conversationId);
    main.behaviour = { models: ['stream-model'], status: 503 };
    for (const streamed of [false, true]) {
      const response = await chat({ message: `fails ${streamed}`, conversationId, stream: streamed });
      assert.equal(response.status, 503, response.text);
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(response.body.code, 'SERVICE_UNAVAILABLE');
      assert.equal(response.headers.get('x-conversation-id'), conversationId);
      assert.doesNotMatch(response.text, /127\.0\.0\.1/);
    }
    main.behaviour = { models: ['stream-model'] };
    const messages = await messagesOf(conversationId);
    assert.deepEqual(
      messages.map((m) => [m.role, m.status, m.incompleteReason ?? null, m.content]),
      [
        ['user', 'completed', null, 'first'],
        ['assistant', 'completed', null, 'Fake answer to: first'],
        ['user', 'completed', null, 'fails false'],
        ['assistant', 'incomplete', 'run_failed', ''],
        ['user', 'completed', null, 'fails true'],
        ['assistant', 'incomplete', 'run_failed', ''],
      ],
    );
    // Empty replies are no part of the history: the model sees both questions, then the new one.
    assert.equal((await chat({ message: 'works again', conversationId })).status, 200);
    assert.deepEqual(
      main.requests.at(-1)!.body.messages.map((m: any) => m.content),
      ['first', 'Fake answer to: first', 'fails false', 'fails true', 'works again'],
    );
  });

  it('names the conversation a failed first turn made in X-Conversation-Id, so that it can be continued', async () => {
    slow.behaviour = { models: ['slow-model'], status: 503 };
    const failed = await chat({ model: 'slow-model', message: 'a new one' });
    assert.equal(failed.status, 503, failed.text);
    const conversationId = failed.headers.get('x-conversation-id');
    assert.match(conversationId ?? '', /^conv_/);
    slow.behaviour = { models: ['slow-model'] };
    const continued = await chat({ model: 'slow-model', message: 'again', conversationId });
    assert.equal(continued.status, 200, continued.text);
    assert.deepEqual(
      (await messagesOf(conversationId!)).map((m) => [m.role, m.status, m.content]),
      [
        ['user', 'completed', 'a new one'],
        ['assistant', 'incomplete', ''],
        ['user', 'completed', 'again'],
        ['assistant', 'completed', 'Fake answer to: again'],
      ],
    );
  });

  it('answers 400 for a model nobody serves and 503 when no node serving it is healthy, storing nothing', async () => {
    const lonely = await startFakeOpenAI({ models: ['lonely-model'] });
    const other = await gatewayOver([lonely]);
    try {
      const otherWorld = await seedWorld(other, 'lonely');
      const rows = await storeRows(other);
      const ask = (model: string, stream = false) =>
        other.request('POST', CHAT, { token: otherWorld.a.member.token, json: { model, message: 'hi', stream } });
      const unknown = await ask('no-such-model');
      assert.equal(unknown.status, 400, unknown.text);
      assert.equal(unknown.body.errors[0].field, 'model');
      await lonely.close();
      // The router learns the node is gone (at its next health check; now, here): the model is known, no node healthy.
      await other.ctx.llm.router.refresh();
      for (const stream of [false, true]) {
        const down = await ask('lonely-model', stream);
        assert.equal(down.status, 503, down.text);
        assert.match(down.headers.get('retry-after') ?? '', /^\d+$/);
      }
      assert.deepEqual(await storeRows(other), rows);
    } finally {
      await other.close();
      await lonely.close();
    }
  });

  it('refuses a second turn while a reply of the conversation is being generated (409), storing nothing, then takes turns again', async () => {
    const conversationId = (await chat({ message: 'first' })).body.conversationId;
    slow.behaviour = { models: ['slow-model'], tokenDelayMs: 30, repeat: 200 };
    const s = await stream({ model: 'slow-model', message: 'long one', conversationId });
    await s.until((items) => payloads(items).some((f) => f.object === 'chat.completion.chunk'));
    const rows = await storeRows(gw);
    for (const streamed of [false, true]) {
      const second = await chat({ message: 'are you done?', conversationId, stream: streamed });
      assert.equal(second.status, 409, second.text);
      assert.equal(second.body.code, 'CONFLICT');
      assert.match(second.body.detail, /still being generated/);
    }
    assert.deepEqual(await storeRows(gw), rows);
    // Another conversation of the same person is not held up.
    assert.equal((await chat({ message: 'elsewhere' })).status, 200);
    s.destroy();
    await settled(conversationId);
    assert.equal((await chat({ message: 'now?', conversationId })).status, 200);
    assert.equal((await messagesOf(conversationId)).length, 6);
  });

  it('stops a reply still streaming when its conversation is deleted: an error frame, the engine cancelled, nothing left', async () => {
    slow.behaviour = { models: ['slow-model'], tokenDelayMs: 30, repeat: 200 };
    const s = await stream({ model: 'slow-model', message: 'a story to forget' });
    await s.until((items) => payloads(items).some((f) => f.object === 'chat.completion.chunk'));
    const { conversationId } = payloads(s.items)[0];
    const aborted = slow.aborted();
    const deleted = await gw.request('DELETE', `${CONVERSATIONS}/${conversationId}`, { token });
    assert.equal(deleted.status, 204, deleted.text);
    const frames = payloads(await s.end(5000));
    assert.equal(frames.at(-1), '[DONE]');
    assert.match(frames.at(-2).error.message, /deleted/);
    await slow.waitForAbort(aborted + 1, 2000);
    assert.deepEqual(await storedItems(gw, conversationId), []);
    assert.equal((await gw.request('GET', `${CONVERSATIONS}/${conversationId}`, { token })).status, 404);
  });

  it('sends heartbeats while the engine is silent after accepting', async () => {
    slow.behaviour = { models: ['slow-model'], silentMs: 2500 };
    const s = await stream({ model: 'slow-model', message: 'think first' });
    const items = await s.end(10_000);
    assert.ok(
      items.some((i) => 'comment' in i),
      'a `:` comment while the engine is silent',
    );
    assert.equal(deltasOf(payloads(items)), 'Fake answer to: think first');
  });
});

describe('persisted chat at shutdown', () => {
  it('ends a turn still streaming after the grace period with a server_shutting_down frame; the reply is stored incomplete', async () => {
    const fake = await startFakeOpenAI({ models: ['slow-model'], tokenDelayMs: 100, repeat: 50 });
    const gw = await gatewayOver([fake], { GATEWAY_SHUTDOWN_GRACE_SECONDS: '1' });
    try {
      const world = await seedWorld(gw, 'conv-shutdown');
      const s = await openStream(
        gw,
        CHAT,
        { model: 'slow-model', stream: true, message: 'hi' },
        { authorization: `Bearer ${world.a.member.token}` },
      );
      await s.until((items) => payloads(items).some((f) => f.choices?.[0]?.delta?.content));
      const { conversationId } = payloads(s.items)[0];
      const closing = gw.app.close();
      const frames = payloads(await s.end(5000));
      assert.equal(frames.at(-1), '[DONE]');
      assert.equal(frames.at(-2).error.code, 'server_shutting_down');
      await closing;
      const [user, answer] = await storedItems(gw, conversationId);
      assert.equal(user.status, 'completed');
      assert.equal(answer.status, 'incomplete');
      assert.ok(answer.content.length > 0);
      assert.equal((await storedRun(gw, answer.run_id)).status, 'failed');
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
