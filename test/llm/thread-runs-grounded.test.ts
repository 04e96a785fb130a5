// Grounded thread runs: a document uploaded and ingested through the API, an assistant
// (or thread, or run) scoped to its workspace, and the run's answer citing it: the
// `[1]` marker becomes a file_citation annotation naming the document, on the stored
// message and on the stream's thread.message.completed. The run's scope wins over the
// thread's, the thread's over the assistant's; a scope id that is no longer the
// tenant's fails the run with last_error instead of crashing it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from './chat-support.js';
import { assistantMessages, BASE, postStream, textOf } from './thread-runs-support.js';

const MODEL = 'grounded-model';
const ANSWER = 'Twenty-five days [1].';
const HANDBOOK = `# Employee Handbook

## Annual leave

Every employee receives twenty-five days of paid annual leave per calendar year.
Unused leave may be carried over until the end of March of the following year.
`;

describe('grounded thread runs', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;
  let workspaceId: string;
  let emptyWorkspaceId: string;
  let documentId: string;
  let assistantId: string;

  const os = (method: string, path: string, json?: unknown) =>
    gw.request(method, `/api/os${path}`, { apiKey: world.a.key.key, ...(json !== undefined ? { json } : {}) });
  const workspace = async (name: string) => (await os('POST', '/workspaces', { name })).body.id as string;
  const lastPrompt = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body.messages;
  const threadWith = async (content: string, scope: Record<string, string[]> = {}) =>
    (await client.beta.threads.create({ messages: [{ role: 'user', content }], ...scope } as never)).id;

  before(async () => {
    fake = await startFakeOpenAI({ models: [MODEL], reply: ANSWER });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'grounded-runs');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}${BASE}`, maxRetries: 0 });
    workspaceId = await workspace('Company');
    emptyWorkspaceId = await workspace('Empty');
    const uploaded = await os('POST', `/workspaces/${workspaceId}/documents`, { name: 'handbook.md', text: HANDBOOK });
    assert.equal(uploaded.status, 202, uploaded.text);
    documentId = uploaded.body.id;
    await eventually(
      'the handbook ingested',
      async () => {
        const doc = (await os('GET', `/documents/${documentId}`)).body;
        assert.notEqual(doc.status, 'failed', doc.error);
        return doc.status === 'ready';
      },
      60_000,
    );
    assistantId = (
      await client.beta.assistants.create({
        model: MODEL,
        instructions: 'Answer from the handbook.',
        workspace_ids: [workspaceId],
      } as never)
    ).id;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('cites the document: a file_citation annotation on the [1] marker, stored and streamed', async () => {
    const threadId = await threadWith('What annual leave days does every employee receive?');
    const run = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
    assert.equal(run.status, 'completed');
    assert.deepEqual((run as any).workspace_ids, [workspaceId], 'the assistant’s scope');
    const system = lastPrompt()[0];
    assert.equal(system.role, 'system');
    assert.ok(system.content.startsWith('Answer from the handbook.\n\n'), 'instructions first, then the sources');
    assert.match(system.content, /twenty-five days of paid annual leave/);

    const [message] = await assistantMessages(client, threadId);
    const part = message!.content[0]!;
    assert.ok(part.type === 'text');
    assert.equal(part.text.value, ANSWER);
    const at = ANSWER.indexOf('[1]');
    assert.deepEqual(part.text.annotations, [
      { type: 'file_citation', text: '[1]', start_index: at, end_index: at + 3, file_citation: { file_id: documentId } },
    ]);

    const s = await postStream(
      gw,
      `/threads/${threadId}/runs`,
      { assistant_id: assistantId, stream: true },
      { 'x-api-key': world.a.key.key },
    );
    const events = await s.end();
    const completed = events.find((e) => e.event === 'thread.message.completed')!.data;
    assert.deepEqual(completed.content[0].text.annotations[0].file_citation, { file_id: documentId });
  });

  it('the run’s scope wins over the thread’s, the thread’s over the assistant’s; an empty one grounds nothing', async () => {
    const threadScoped = await threadWith('Leave?', { workspace_ids: [emptyWorkspaceId] });
    const byThread = await client.beta.threads.runs.createAndPoll(threadScoped, { assistant_id: assistantId });
    assert.deepEqual((byThread as any).workspace_ids, [emptyWorkspaceId]);
    assert.doesNotMatch(lastPrompt()[0].content, /twenty-five days of paid/, 'the empty workspace has no sources');
    const part = (await assistantMessages(client, threadScoped))[0]!.content[0]!;
    assert.ok(part.type === 'text');
    assert.deepEqual(part.text.annotations, [], 'no source, no citation: the [1] stays text');

    const byRun = await client.beta.threads.runs.createAndPoll(threadScoped, {
      assistant_id: assistantId,
      workspace_ids: [workspaceId],
    } as never);
    assert.deepEqual((byRun as any).workspace_ids, [workspaceId]);
    assert.match(lastPrompt()[0].content, /twenty-five days of paid annual leave/);

    const none = await client.beta.threads.runs.createAndPoll(threadScoped, { assistant_id: assistantId, workspace_ids: [] } as never);
    assert.deepEqual((none as any).workspace_ids, []);
    assert.deepEqual(lastPrompt()[0], { role: 'system', content: 'Answer from the handbook.' });
    const answers = await assistantMessages(client, threadScoped);
    assert.equal(textOf(answers.at(-1)!), ANSWER);
  });

  it('a scope id of another tenant is a 404 at create; one deleted since fails the run with last_error', async () => {
    const threadId = await threadWith('Leave?');
    const foreign = await gw.request('POST', `${BASE}/threads/${threadId}/runs`, {
      apiKey: world.b.key.key,
      json: { assistant_id: assistantId, workspace_ids: [workspaceId] },
    });
    assert.equal(foreign.status, 404);
    const bThread = (await gw.request('POST', `${BASE}/threads`, { apiKey: world.b.key.key, json: {} })).body.id;
    const bAssistant = (await gw.request('POST', `${BASE}/assistants`, { apiKey: world.b.key.key, json: { model: MODEL } })).body.id;
    const bRun = await gw.request('POST', `${BASE}/threads/${bThread}/runs`, {
      apiKey: world.b.key.key,
      json: { assistant_id: bAssistant, workspace_ids: [workspaceId] },
    });
    assert.equal(bRun.status, 404, 'tenant A’s workspace is not tenant B’s to ground in');

    const doomed = await workspace('Doomed');
    const scoped = await threadWith('Anything?', { workspace_ids: [doomed] });
    assert.equal((await os('DELETE', `/workspaces/${doomed}`)).status, 204);
    const run = await client.beta.threads.runs.createAndPoll(scoped, { assistant_id: assistantId });
    assert.equal(run.status, 'failed');
    assert.equal(run.last_error?.code, 'invalid_prompt');
    assert.match(run.last_error!.message, /not found/i);
    const [message] = await assistantMessages(client, scoped);
    assert.equal(message!.status, 'incomplete');
    // The thread is free again.
    const next = await client.beta.threads.runs.createAndPoll(scoped, { assistant_id: assistantId, workspace_ids: [] } as never);
    assert.equal(next.status, 'completed');
  });
});
