// The fuzz test's target, shared with bench/fuzz-stalls.ts: a gateway over real
// compute nodes (fake OpenAI-compatible and Ollama servers on loopback, and the local
// engine on, with no model), one of every resource for the generated paths to name,
// and the loop that sends the generated cases a few at a time.
import assert from 'node:assert/strict';
import http from 'node:http';
import { seedTenant, seedUser, tokenFor, type SeededTenant, type TestGateway } from '../../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI } from '../../helpers/fake-engines/index.js';
import { closedLoopbackUrl } from '../../helpers/closed-port.js';
import { gatewayOver } from '../../llm/chat-support.js';
import { createApiKey } from '../support.js';
import { issueScimToken } from '../../../src/areas/auth/scim-tokens/service.js';
import { SCHEMA } from '../../../src/areas/auth/scim/protocol.js';
import { Rng } from './prng.js';
import { generateCases, type Fixture, type FuzzCase } from './cases.js';
import { send, type Answer } from './send.js';

export const CHAT_MODEL = 'fuzz-model';
export const CONCURRENCY = 8;

export interface FuzzTarget {
  gw: TestGateway;
  admin: SeededTenant;
  fx: Fixture;
  close(): Promise<void>;
}

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const engines = [
    await startFakeOpenAI({ models: [CHAT_MODEL], reply: 'fuzz answer' }),
    await startFakeOllama({ models: ['present:latest'] }),
  ];
  const gw = await gatewayOver(engines, {
    GATEWAY_LOCAL_ENGINE: 'on',
    GATEWAY_LOCAL_THREADS: '1',
    // Every fuzz request comes from 127.0.0.1 and most logins are wrong on purpose: the
    // per-address limit would otherwise lock out the final, legitimate login of the admin.
    GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
  });
  const admin = await seedTenant(gw, 'fuzz', ['admin', 'platform_admin']);
  const throwaway = await seedTenant(gw, 'fuzzb');
  const adminJwt = await tokenFor(gw, admin.admin.id, admin.tenantId);
  const apiKey = (await createApiKey(gw, admin.tenantId, 'fuzz')).key;
  const scimToken = (await issueScimToken(gw.ctx, admin.tenantId, { name: 'fuzz' }, admin.admin.id)).token;
  const scimAs = (resource: string, json: object) => gw.request('POST', `/api/auth/scim/v2/${resource}`, { token: scimToken, json });
  const scimUser = await scimAs('Users', { schemas: [SCHEMA.user], userName: 'fuzz-target@example.test' });
  const scimGroup = await scimAs('Groups', { schemas: [SCHEMA.group], displayName: 'fuzz target', members: [{ value: scimUser.body.id }] });
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
  assert.equal(scimUser.status, 201, scimUser.text);
  assert.equal(scimGroup.status, 201, scimGroup.text);
  const fx: Fixture = {
    tenantA: admin.tenantId,
    tenantB: throwaway.tenantId,
    apiKey,
    adminJwt,
    scimToken,
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
      scimUserId: scimUser.body.id,
      scimGroupId: scimGroup.body.id,
    },
    closedUrl,
    chatModel: CHAT_MODEL,
  };
  return {
    gw,
    admin,
    fx,
    async close() {
      await gw.close();
      await Promise.all(engines.map((e) => e.close()));
    },
  };
}

/** Sends `requests` generated cases (and the special ones) from `seed`, CONCURRENCY at a time, handing each answer to `each`. */
export async function sendCases(
  target: FuzzTarget,
  seed: number,
  requests: number,
  each: (c: FuzzCase, answer: Answer) => void,
  onSend?: { start(c: FuzzCase): void; end(c: FuzzCase): void },
): Promise<void> {
  const { port } = new URL(target.gw.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const to = { host: '127.0.0.1', port: Number(port), agent };
  try {
    await inParallel(generateCases(target.gw.app.routeTable, target.fx, new Rng(seed), requests), CONCURRENCY, async (c) => {
      onSend?.start(c);
      const answer = await send(to, c);
      onSend?.end(c);
      each(c, answer);
    });
  } finally {
    agent.destroy();
  }
}

/** Runs `each` over the cases, `concurrency` at a time, taking them from the generator in order. */
async function inParallel(cases: Iterator<FuzzCase>, concurrency: number, each: (c: FuzzCase) => Promise<void>): Promise<void> {
  const worker = async () => {
    for (let next = cases.next(); !next.done; next = cases.next()) await each(next.value);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
