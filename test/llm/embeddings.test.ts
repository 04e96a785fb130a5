// POST /api/llm/v1/embeddings over real fake engines: OpenAI's shape (floats and
// base64), `dimensions` and token-id inputs forwarded to `openai` nodes and refused
// for the others, bounds as 400s naming the field, usage recorded, and the security
// cases (no credential, a revoked key, another tenant's model).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedWorld, type World } from '../helpers/world.js';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { embeddingOf } from '../helpers/fake-engines/replies.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver, usageRows } from './chat-support.js';

const PATH = '/api/llm/v1/embeddings';

describe('llm embeddings', () => {
  let gw: TestGateway;
  let openai: FakeEngine;
  let ollama: FakeEngine;
  let privateA: FakeEngine;
  let world: World;
  let key: string;

  before(async () => {
    openai = await startFakeOpenAI({ models: ['embed-oa'] });
    ollama = await startFakeOllama({ models: ['embed-ol:latest'] });
    privateA = await startFakeOpenAI({ models: ['private-a'] });
    gw = await gatewayOver([openai, ollama]);
    world = await seedWorld(gw, 'embed');
    key = world.a.key.key;
    const node = await gw.request('POST', '/api/llm/v1/nodes', {
      token: world.platform.admin.token,
      json: { name: 'for-a', engine: 'openai', url: privateA.url, tenantIds: [world.a.tenantId] },
    });
    assert.equal(node.status, 201, node.text);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([openai?.close(), ollama?.close(), privateA?.close()]);
  });

  const embed = (json: unknown, credential: { apiKey?: string; token?: string } = { apiKey: key }) =>
    gw.request('POST', PATH, { ...credential, json });

  it("answers in OpenAI's list shape, one float vector per input, in order", async () => {
    for (const model of ['embed-oa', 'embed-ol:latest']) {
      const response = await embed({ model, input: ['first text', 'second text'] });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.object, 'list');
      assert.equal(response.body.model, model);
      assert.deepEqual(
        response.body.data.map((d: { object: string; index: number }) => [d.object, d.index]),
        [
          ['embedding', 0],
          ['embedding', 1],
        ],
      );
      assert.deepEqual(response.body.data[0].embedding, embeddingOf('first text'));
      assert.deepEqual(response.body.data[1].embedding, embeddingOf('second text'));
      assert.ok(response.body.usage.prompt_tokens > 0);
      assert.equal(response.body.usage.total_tokens, response.body.usage.prompt_tokens);
    }
    const single = await embed({ model: 'embed-oa', input: 'just one', user: 'end-user-7' });
    assert.equal(single.status, 200, single.text);
    assert.equal(single.body.data.length, 1);
    assert.equal(openai.requests.at(-1)?.body.user, undefined, '`user` is accepted, not forwarded');
  });

  it('encodes base64 as little-endian float32 bytes, as OpenAI does', async () => {
    const response = await embed({ model: 'embed-ol:latest', input: 'encode me', encoding_format: 'base64' });
    assert.equal(response.status, 200, response.text);
    const bytes = Buffer.from(response.body.data[0].embedding, 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    assert.deepEqual(decoded, Array.from(new Float32Array(embeddingOf('encode me'))));
  });

  it('forwards dimensions and token-id inputs to openai nodes; other engines refuse them with a 400 naming the field', async () => {
    const shortened = await embed({ model: 'embed-oa', input: 'shorter', dimensions: 8 });
    assert.equal(shortened.status, 200, shortened.text);
    assert.equal(shortened.body.data[0].embedding.length, 8);
    assert.equal(openai.requests.at(-1)?.body.dimensions, 8);

    const tokens = await embed({ model: 'embed-oa', input: [[1, 2, 3], [4]] });
    assert.equal(tokens.status, 200, tokens.text);
    assert.deepEqual(openai.requests.at(-1)?.body.input, [[1, 2, 3], [4]]);
    assert.equal(tokens.body.usage.prompt_tokens, 4, 'token inputs count their ids');
    const oneTokenArray = await embed({ model: 'embed-oa', input: [5, 6] });
    assert.equal(oneTokenArray.status, 200, oneTokenArray.text);
    assert.deepEqual(openai.requests.at(-1)?.body.input, [[5, 6]]);

    const asked = ollama.requests.filter((r) => r.path === '/api/embed').length;
    const dims = await embed({ model: 'embed-ol:latest', input: 'x', dimensions: 8 });
    assert.equal(dims.status, 400, dims.text);
    assert.match(dims.body.detail, /^dimensions: the ollama engine/);
    const ids = await embed({ model: 'embed-ol:latest', input: [[1, 2]] });
    assert.equal(ids.status, 400, ids.text);
    assert.match(ids.body.detail, /^input: the ollama engine .* text only/);
    assert.equal(ollama.requests.filter((r) => r.path === '/api/embed').length, asked, 'nothing reached the engine');
  });

  it('refuses bad input with a 400 naming the field, before any engine is asked', async () => {
    const embeddings = () => openai.requests.filter((r) => r.path === '/v1/embeddings').length;
    const asked = embeddings();
    const cases: [unknown, RegExp][] = [
      [{ model: 'embed-oa' }, /input/],
      [{ input: 'x' }, /model/],
      [{ model: 'embed-oa', input: '' }, /^input: must not be an empty string/],
      [{ model: 'embed-oa', input: ['ok', ''] }, /^input\[1\]: must not be an empty string/],
      [{ model: 'embed-oa', input: [] }, /^input: must not be empty/],
      [{ model: 'embed-oa', input: Array.from({ length: 2049 }, () => 'a') }, /^input: at most 2048 inputs/],
      [{ model: 'embed-oa', input: ['x'.repeat(65_537)] }, /^input\[0\]: must be at most 65536 characters/],
      [{ model: 'embed-oa', input: ['text', [1, 2]] }, /^input: .*not a mix/],
      [{ model: 'embed-oa', input: [[]] }, /^input\[0\]: must not be an empty token array/],
      [{ model: 'embed-oa', input: [[-1]] }, /^input\[0\]: token ids/],
      [{ model: 'embed-oa', input: [1.5] }, /input/],
      [{ model: 'embed-oa', input: { text: 'x' } }, /input/],
      [{ model: 'embed-oa', input: 'x', encoding_format: 'hex' }, /encoding_format/],
      [{ model: 'embed-oa', input: 'x', dimensions: 0 }, /dimensions/],
      [{ model: 'embed-oa', input: 'x', dimensions: '8' }, /dimensions/],
      [{ model: 'embed-oa', input: 'x', user: 7 }, /user/],
      [{ model: 'embed-oa', input: 'nul \u0000 inside' }, /input/],
      [{ model: 'no-such-model', input: 'x' }, /^model: unknown model/],
    ];
    for (const [json, detail] of cases) {
      const response = await embed(json);
      assert.equal(response.status, 400, `${JSON.stringify(json).slice(0, 80)}: ${response.text}`);
      assert.match(response.body.detail, detail, JSON.stringify(json).slice(0, 80));
    }
    assert.equal(embeddings(), asked);
  });

  it('serves the built-in embedder that GET /models lists (where pgvector is there to list it)', async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector: the built-in embedder is not listed');
    const model = 'gateway-word-vectors-en';
    const floats = await embed({ model, input: ['the cat sat on the mat', 'dogs bark'] });
    assert.equal(floats.status, 200, floats.text);
    assert.equal(floats.body.model, model);
    assert.equal(floats.body.data.length, 2);
    assert.equal(floats.body.data[0].embedding.length, 100);
    const base64 = await embed({ model, input: 'the cat sat on the mat', encoding_format: 'base64' });
    const bytes = Buffer.from(base64.body.data[0].embedding, 'base64');
    assert.deepEqual(
      Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4)),
      Array.from(new Float32Array(floats.body.data[0].embedding)),
    );
    const dims = await embed({ model, input: 'x', dimensions: 10 });
    assert.equal(dims.status, 400);
    assert.match(dims.body.detail, /^dimensions: /);
    const ids = await embed({ model, input: [[1, 2]] });
    assert.equal(ids.status, 400);
    assert.match(ids.body.detail, /^input: .*text only/);
  });

  it('records usage under the endpoint "embeddings"', async () => {
    const { key: ownKey } = await createApiKey(gw, world.b.tenantId, 'usage');
    const response = await embed({ model: 'embed-oa', input: ['count these words'] }, { apiKey: ownKey });
    assert.equal(response.status, 200, response.text);
    const rows = (await usageRows(gw, world.b.tenantId)).filter((r) => r.endpoint === 'embeddings');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].model, 'embed-oa');
    assert.equal(rows[0].status, 'ok');
    assert.equal(rows[0].stream, false);
    assert.equal(rows[0].prompt_tokens, response.body.usage.prompt_tokens);
    assert.equal(rows[0].completion_tokens, 0);
  });

  it('answers an engine failure as a 503 with Retry-After, recorded', async () => {
    openai.behaviour.status = 500;
    try {
      const response = await embed({ model: 'embed-oa', input: 'x' });
      assert.equal(response.status, 503, response.text);
      assert.ok(response.headers.get('retry-after'));
    } finally {
      delete openai.behaviour.status;
    }
  });

  it("refuses no credential and a revoked key with 401, and another tenant's model as chat does", async () => {
    assert.equal((await gw.request('POST', PATH, { json: { model: 'embed-oa', input: 'x' } })).status, 401);
    const revoked = await createApiKey(gw, world.a.tenantId, 'revoked');
    const admin: Principal = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, revoked.id, 'revoked');
    assert.equal((await embed({ model: 'embed-oa', input: 'x' }, { apiKey: revoked.key })).status, 401);

    // Tenant A's own node serves private-a: A embeds with it, B gets what chat answers B.
    assert.equal((await embed({ model: 'private-a', input: 'x' })).status, 200);
    const asB = await embed({ model: 'private-a', input: 'x' }, { apiKey: world.b.key.key });
    const chatAsB = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: world.b.key.key,
      json: { model: 'private-a', messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(asB.status, 400, asB.text);
    assert.equal(asB.status, chatAsB.status);
    assert.equal(asB.body.detail, chatAsB.body.detail);
    assert.equal(privateA.requests.filter((r) => r.path.includes('embeddings')).length, 1, "B's call never reached A's node");

    // A model the tenant's allowedModels leaves out: the same 400.
    const patched = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, {
      token: world.a.admin.token,
      json: { allowedModels: ['embed-ol:latest'] },
    });
    assert.equal(patched.status, 200, patched.text);
    try {
      const refused = await embed({ model: 'embed-oa', input: 'x' }, { token: world.a.member.token });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.body.detail, /^model: unknown model/);
    } finally {
      await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, { token: world.a.admin.token, json: { allowedModels: null } });
    }
  });
});
