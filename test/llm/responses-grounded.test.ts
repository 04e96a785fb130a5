// Grounded responses (our extension, snake_case as the threads API has it):
// workspace_ids / collection_ids put the tenant's sources into the prompt, the answer's
// [n] markers come back as file_citation annotations, the rag_* fields say what was
// found; an id that is not the tenant's is a 404 before anything is stored.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from './chat-support.js';

const ANSWER = 'Twenty-five days [1].';
const HANDBOOK = `# Employee Handbook

## Annual leave

Every employee receives twenty-five days of paid annual leave per calendar year.
`;

describe('grounded responses', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;
  let workspaceId: string;
  let documentId: string;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['ground-model'], reply: ANSWER });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'rground');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
    const os = (method: string, path: string, json?: unknown) =>
      gw.request(method, `/api/os${path}`, { apiKey: world.a.key.key, ...(json !== undefined ? { json } : {}) });
    workspaceId = (await os('POST', '/workspaces', { name: 'Company' })).body.id;
    documentId = (await os('POST', `/workspaces/${workspaceId}/documents`, { name: 'handbook.md', text: HANDBOOK })).body.id;
    await eventually('the handbook ingested', async () => (await os('GET', `/documents/${documentId}`)).body.status === 'ready', 60_000);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('grounds the answer in the scope and cites the document, JSON and streamed', async () => {
    const body = {
      model: 'ground-model',
      input: 'How many annual leave days does every employee receive?',
      instructions: 'Answer from the handbook.',
      workspace_ids: [workspaceId],
    };
    const response = await client.responses.create(body as never);
    const system = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body.messages[0];
    assert.equal(system.role, 'system');
    assert.ok(system.content.startsWith('Answer from the handbook.'));
    assert.match(system.content, /twenty-five days of paid annual leave/);
    const raw = response as unknown as Record<string, unknown>;
    assert.equal(raw.rag_active, true);
    assert.deepEqual(raw.workspace_ids, [workspaceId]);
    const part = (response.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    assert.deepEqual(part.annotations, [
      { type: 'file_citation', file_id: documentId, filename: 'handbook.md', index: ANSWER.indexOf('[1]') },
    ]);

    const streamed = await client.responses.stream(body as never).finalResponse();
    const streamedPart = (streamed.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    assert.equal(streamedPart.annotations.length, 1);
  });

  it("answers 404 for another tenant's workspace, storing nothing", async () => {
    const before = (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs'))[0]!.n;
    const res = await gw.request('POST', '/api/llm/v1/responses', {
      apiKey: world.b.key.key,
      json: { model: 'ground-model', input: 'x', workspace_ids: [workspaceId] },
    });
    assert.equal(res.status, 404, res.text);
    const after = (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs'))[0]!.n;
    assert.equal(after, before);
  });
});
