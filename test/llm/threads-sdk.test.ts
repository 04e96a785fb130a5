// The official `openai` SDK (6.49) against <base>/api/llm/v1, unchanged: its
// beta.assistants and beta.threads (and .messages) clients create, read, modify, list,
// page and delete, with an API key and with a person's access token. Whatever works
// for the SDK works for our users.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver } from './chat-support.js';

describe('threads API with the official openai SDK', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;
  let asMember: OpenAI;
  let workspaceId: string;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['sdk-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'tsdk');
    const baseURL = `${gw.url}/api/llm/v1`;
    client = new OpenAI({ apiKey: world.a.key.key, baseURL, maxRetries: 0 });
    asMember = new OpenAI({ apiKey: world.a.member.token, baseURL, maxRetries: 0 });
    workspaceId = (await gw.request('POST', '/api/os/workspaces', { apiKey: world.a.key.key, json: { name: 'w' } })).body.id;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('creates, retrieves, updates, lists and deletes assistants', async () => {
    const created = await client.beta.assistants.create({
      model: 'sdk-model',
      name: 'SDK helper',
      instructions: 'Be brief.',
      temperature: 0.5,
      metadata: { source: 'sdk' },
      // The grounding scope, our extension: the SDK passes fields it does not know.
      ...({ workspace_ids: [workspaceId] } as object),
    });
    assert.equal(created.object, 'assistant');
    assert.match(created.id, /^asst_/);
    assert.equal(created.model, 'sdk-model');
    assert.deepEqual(created.tools, []);
    assert.deepEqual((created as unknown as { workspace_ids: string[] }).workspace_ids, [workspaceId]);

    const retrieved = await client.beta.assistants.retrieve(created.id);
    assert.deepEqual(retrieved, created);

    const updated = await client.beta.assistants.update(created.id, { name: 'Renamed', metadata: { source: 'sdk', v: '2' } });
    assert.equal(updated.name, 'Renamed');
    assert.equal(updated.instructions, 'Be brief.');
    assert.deepEqual(updated.metadata, { source: 'sdk', v: '2' });

    const more = [];
    for (let i = 0; i < 3; i++) more.push((await client.beta.assistants.create({ model: 'auto', name: `a${i}` })).id);
    const seen: string[] = [];
    for await (const assistant of client.beta.assistants.list({ limit: 2, order: 'asc' })) seen.push(assistant.id);
    assert.deepEqual(seen, [created.id, ...more]);

    const deleted = await client.beta.assistants.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: 'assistant.deleted', deleted: true });
    await assert.rejects(client.beta.assistants.retrieve(created.id), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      return true;
    });
  });

  it('refuses what is not supported with a BadRequestError, which the SDK does not retry', async () => {
    await assert.rejects(
      client.beta.assistants.create({ model: 'sdk-model', tools: [{ type: 'code_interpreter' }] }),
      OpenAI.BadRequestError,
    );
    await assert.rejects(client.beta.assistants.create({ model: 'no-such-model' }), OpenAI.BadRequestError);
    const thread = await client.beta.threads.create();
    await assert.rejects(
      client.beta.threads.messages.create(thread.id, {
        role: 'user',
        content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }],
      }),
      OpenAI.BadRequestError,
    );
  });

  it('creates a thread with messages, then retrieves, updates and deletes it', async () => {
    const thread = await client.beta.threads.create({
      messages: [
        { role: 'user', content: 'Hello?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Hi.' }] },
      ],
      metadata: { customer: 'c1' },
    });
    assert.equal(thread.object, 'thread');
    assert.match(thread.id, /^thread_/);
    assert.deepEqual(thread.metadata, { customer: 'c1' });
    assert.deepEqual(await client.beta.threads.retrieve(thread.id), thread);

    const updated = await client.beta.threads.update(thread.id, { metadata: { customer: 'c2' } });
    assert.deepEqual(updated.metadata, { customer: 'c2' });

    const deleted = await client.beta.threads.delete(thread.id);
    assert.deepEqual(deleted, { id: thread.id, object: 'thread.deleted', deleted: true });
    await assert.rejects(client.beta.threads.retrieve(thread.id), OpenAI.NotFoundError);
  });

  it('creates, lists, retrieves, updates and deletes messages', async () => {
    const thread = await client.beta.threads.create();
    const message = await client.beta.threads.messages.create(thread.id, { role: 'user', content: 'What is new?', metadata: { n: '1' } });
    assert.equal(message.object, 'thread.message');
    assert.equal(message.thread_id, thread.id);
    assert.equal(message.status, 'completed');
    const [part] = message.content;
    assert.equal(part?.type, 'text');
    assert.deepEqual(part?.type === 'text' ? part.text : undefined, { value: 'What is new?', annotations: [] });

    assert.deepEqual(await client.beta.threads.messages.retrieve(message.id, { thread_id: thread.id }), message);
    const updated = await client.beta.threads.messages.update(message.id, { thread_id: thread.id, metadata: { n: '2' } });
    assert.deepEqual(updated.metadata, { n: '2' });

    const page = await client.beta.threads.messages.list(thread.id);
    assert.deepEqual(
      page.data.map((m) => m.id),
      [message.id],
    );
    assert.equal(page.hasNextPage(), false);

    const deleted = await client.beta.threads.messages.delete(message.id, { thread_id: thread.id });
    assert.deepEqual(deleted, { id: message.id, object: 'thread.message.deleted', deleted: true });
    await assert.rejects(client.beta.threads.messages.retrieve(message.id, { thread_id: thread.id }), OpenAI.NotFoundError);
  });

  it('pages messages with for await, hasNextPage, after, before and order', async () => {
    const thread = await client.beta.threads.create();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.beta.threads.messages.create(thread.id, { role: 'user', content: `m${i}` })).id);

    const all: string[] = [];
    for await (const message of client.beta.threads.messages.list(thread.id, { limit: 2 })) all.push(message.id);
    assert.deepEqual(all, [...ids].reverse(), 'newest first, across three pages');

    const first = await client.beta.threads.messages.list(thread.id, { limit: 2, order: 'asc' });
    assert.deepEqual(
      first.data.map((m) => m.id),
      ids.slice(0, 2),
    );
    assert.equal(first.hasNextPage(), true);
    const second = await first.getNextPage();
    assert.deepEqual(
      second.data.map((m) => m.id),
      ids.slice(2, 4),
    );
    const third = await second.getNextPage();
    assert.deepEqual(
      third.data.map((m) => m.id),
      ids.slice(4),
    );
    assert.equal(third.hasNextPage(), false);

    const after = await client.beta.threads.messages.list(thread.id, { after: ids[1]!, order: 'asc' });
    assert.deepEqual(
      after.data.map((m) => m.id),
      ids.slice(2),
    );
    const before = await client.beta.threads.messages.list(thread.id, { before: ids[4]!, order: 'asc', limit: 2 });
    assert.deepEqual(
      before.data.map((m) => m.id),
      ids.slice(2, 4),
    );
    await assert.rejects(client.beta.threads.messages.list(thread.id, { limit: 500 }), OpenAI.BadRequestError);
  });

  it("works with a person's access token, and keeps the person's records from the API key", async () => {
    const thread = await asMember.beta.threads.create({ messages: [{ role: 'user', content: 'mine' }] });
    const messages = [];
    for await (const message of asMember.beta.threads.messages.list(thread.id)) messages.push(message);
    assert.equal(messages.length, 1);
    await assert.rejects(client.beta.threads.retrieve(thread.id), OpenAI.NotFoundError);
    await assert.rejects(client.beta.threads.messages.list(thread.id), OpenAI.NotFoundError);
    const assistant = await asMember.beta.assistants.create({ model: 'sdk-model' });
    await assert.rejects(client.beta.assistants.retrieve(assistant.id), OpenAI.NotFoundError);
  });

  it('answers an unknown key with an AuthenticationError', async () => {
    const stranger = new OpenAI({ apiKey: 'rdk_not-a-key', baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
    await assert.rejects(stranger.beta.threads.create(), OpenAI.AuthenticationError);
    await assert.rejects(stranger.beta.assistants.list(), OpenAI.AuthenticationError);
  });
});
