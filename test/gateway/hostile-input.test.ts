// Regression tests for the hostile input of issue 14, each pinned to what it did:
// - a 300 KB body of 100,000 `{}` messages answered a 19 MB 400 in 1.4 s, and eight
//   at once kept /health waiting 9 s (validation reported every error);
// - a NUL character in a string was a 500 from PostgreSQL on twelve fields, and
//   control characters were stored in names as sent;
// - `__proto__` keys were accepted (the gateway's JSON parser had dropped Fastify's guard);
// - a request without a Host header got Node's bare 400 (no problem, no correlation id);
// - found by the fuzz test: a lone surrogate in tenant settings was a 500 (jsonb), a path
//   that does not percent-decode or a too-long path parameter got Fastify's own JSON.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedTenant, type TestGateway } from '../helpers/gateway.js';
import { createApiKey, parseRawResponse, silentClient, tokenFor } from './support.js';

function assertFieldRefused(response: { status: number; headers: Headers; body: any }, field: string, label: string) {
  assert.equal(response.status, 400, `${label}: ${JSON.stringify(response.body)}`);
  assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8', label);
  assert.equal(response.body.code, 'VALIDATION_FAILED', label);
  assert.deepEqual(
    response.body.errors.map((e: { field: string }) => e.field),
    [field],
    label,
  );
  assert.equal(response.body.correlationId, response.headers.get('x-correlation-id'), label);
}

describe('edge: hostile input', () => {
  let gw: TestGateway;
  let tenantId: string;
  let apiKey: string;
  let admin: string;

  before(async () => {
    gw = await startGateway({ GATEWAY_LOCAL_ENGINE: 'off' });
    const tenant = await seedTenant(gw, 'hostile', ['admin', 'platform_admin']);
    tenantId = tenant.tenantId;
    apiKey = (await createApiKey(gw, tenantId)).key;
    admin = await tokenFor(gw, tenant.admin.id, tenantId);
  });
  after(() => gw.close());

  describe('validation errors are bounded and fail fast', () => {
    const oversized = JSON.stringify({ messages: Array.from({ length: 100_000 }, () => ({})) });

    it('100,000 empty messages: a small 400 naming the size limit', async () => {
      const response = await gw.request('POST', '/api/llm/v1/chat/completions', {
        apiKey,
        body: oversized,
        headers: { 'content-type': 'application/json' },
      });
      assertFieldRefused(response, 'messages', 'oversized messages');
      assert.match(response.body.errors[0].message, /1000/);
      assert.ok(response.text.length < 1024, `answer of ${response.text.length} bytes`);
    });

    it('eight at once are each refused on the size limit alone, and /health answers meanwhile', async () => {
      // The bug was validation reporting all 100,000 errors (seconds of event loop, 19 MB
      // answers): what bounds the work is that each answer stops at the one size error.
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, () =>
          gw.request('POST', '/api/llm/v1/chat/completions', { apiKey, body: oversized, headers: { 'content-type': 'application/json' } }),
        ),
        gw.request('GET', '/health'),
      ]);
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array(8).fill(400), 200],
      );
      for (const answer of answers.slice(0, 8)) {
        assertFieldRefused(answer, 'messages', 'one of eight oversized');
        assert.ok(answer.text.length < 1024, `answer of ${answer.text.length} bytes`);
      }
    });

    for (const [label, path, body, field] of [
      ['api-key scopes', () => `/api/auth/tenants/${tenantId}/api-keys`, { name: 'k', scopes: Array(100_000).fill('s') }, 'scopes'],
      [
        'allowedModels',
        () => `/api/auth/tenants/${tenantId}`,
        { allowedModels: Array.from({ length: 50_000 }, (_, i) => `m${i}`) },
        'allowedModels',
      ],
      [
        'node tenantIds',
        () => '/api/llm/v1/nodes',
        { name: 'n', engine: 'openai', url: 'http://127.0.0.1:9/v1', tenantIds: Array(100_000).fill('ten_x') },
        'tenantIds',
      ],
    ] as const) {
      it(`an oversized ${label} array is refused by its size alone`, async () => {
        const method = label === 'allowedModels' ? 'PATCH' : 'POST';
        const response = await gw.request(method, path(), { token: admin, json: body });
        assertFieldRefused(response, field, label);
        assert.match(response.body.errors[0].message, /must NOT have more than \d+ items/);
      });
    }
  });

  describe('NUL and control characters', () => {
    let workspaceId: string;
    let nodeId: string;
    before(async () => {
      workspaceId = (await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'target' } })).body.id;
      const node = await gw.request('POST', '/api/llm/v1/nodes', {
        token: admin,
        json: { name: 'target', engine: 'openai', url: 'http://127.0.0.1:9/v1' },
      });
      assert.equal(node.status, 201, JSON.stringify(node.body));
      nodeId = node.body.id;
    });

    // Every field that answered 500 with a NUL in it.
    const cases = () =>
      [
        ['POST', '/api/auth/tenants', { name: 'a\u0000b' }, 'name'],
        ['PATCH', `/api/auth/tenants/${tenantId}`, { name: 'a\u0000b' }, 'name'],
        ['PATCH', `/api/auth/tenants/${tenantId}`, { defaultModel: 'a\u0000b' }, 'defaultModel'],
        ['PATCH', `/api/auth/tenants/${tenantId}`, { allowedModels: ['ok', 'a\u0000b'] }, 'allowedModels[1]'],
        ['POST', `/api/auth/tenants/${tenantId}/api-keys`, { name: 'a\u0000b' }, 'name'],
        ['POST', `/api/auth/tenants/${tenantId}/api-keys`, { name: 'k', customerId: 'a\u0000b' }, 'customerId'],
        ['POST', '/api/os/workspaces', { name: 'a\u0000b' }, 'name'],
        ['POST', '/api/os/workspaces', { name: 'ok', description: 'a\u0000b' }, 'description'],
        ['PATCH', `/api/os/workspaces/${workspaceId}`, { name: 'a\u0000b' }, 'name'],
        ['PATCH', `/api/os/workspaces/${workspaceId}`, { description: 'a\u0000b' }, 'description'],
        ['POST', '/api/llm/v1/nodes', { name: 'a\u0000b', engine: 'openai', url: 'http://127.0.0.1:9/v1' }, 'name'],
        ['PATCH', `/api/llm/v1/nodes/${nodeId}`, { name: 'a\u0000b' }, 'name'],
        ['POST', '/api/llm/v1/chat/completions', { messages: [{ role: 'user', content: 'a\u0000b' }] }, 'messages[0].content'],
      ] as const;

    it('a NUL in any string is a 400 naming the field, and nothing is stored', async () => {
      const before = await gw.request('GET', `/api/os/workspaces/${workspaceId}`, { apiKey });
      for (const [method, path, body, field] of cases()) {
        assertFieldRefused(await gw.request(method, path, { token: admin, json: body }), field, `${method} ${path} ${field}`);
      }
      assert.deepEqual((await gw.request('GET', `/api/os/workspaces/${workspaceId}`, { apiKey })).body, before.body);
    });

    it('names and other one-line values refuse every control character', async () => {
      for (const name of ['a\u0007b\u001bc', 'tab\there', 'line\nbreak', 'del\u007f', 'c1\u0085']) {
        assertFieldRefused(await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name } }), 'name', JSON.stringify(name));
      }
      assertFieldRefused(
        await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'ok', description: 'bell\u0007' } }),
        'description',
        'bell in a description',
      );
      assertFieldRefused(
        await gw.request('POST', '/api/llm/v1/chat/completions', {
          apiKey,
          json: { model: 'm\u001b', messages: [{ role: 'user', content: 'hi' }] },
        }),
        'model',
        'escape in a model id',
      );
    });

    it('a lone surrogate is a 400 too: jsonb refused it (500), text columns changed it to U+FFFD', async () => {
      for (const [method, path, body, field] of [
        ['PATCH', `/api/auth/tenants/${tenantId}`, { defaultModel: 'a\ud800b' }, 'defaultModel'],
        ['PATCH', `/api/auth/tenants/${tenantId}`, { allowedModels: ['a\udc00b'] }, 'allowedModels[0]'],
        ['POST', '/api/os/workspaces', { name: 'ok', description: 'a\ud800' }, 'description'],
        ['POST', '/api/llm/v1/chat/completions', { messages: [{ role: 'user', content: '\udfff' }] }, 'messages[0].content'],
      ] as const) {
        const response = await gw.request(method, path, { token: admin, json: body });
        assertFieldRefused(response, field, `${method} ${path} ${field}`);
        assert.match(response.body.errors[0].message, /surrogate/);
      }
      // A surrogate pair is one character, and welcome.
      assert.equal((await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'emoji \ud83d\ude00' } })).status, 201);
    });

    it('path parameters follow the same rule', async () => {
      const response = await gw.request('GET', '/api/os/workspaces/ws_%00x', { apiKey });
      assertFieldRefused(response, 'workspaceId', 'NUL in a path id');
    });

    it('descriptions keep tabs and line breaks; message content keeps everything but NUL', async () => {
      const description = 'first line\n\tindented\r\nlast';
      const created = await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'multi-line', description } });
      assert.equal(created.status, 201);
      assert.equal((await gw.request('GET', `/api/os/workspaces/${created.body.id}`, { apiKey })).body.description, description);
      // No compute node serves a model here: past validation, the router answers.
      const chat = await gw.request('POST', '/api/llm/v1/chat/completions', {
        apiKey,
        json: { messages: [{ role: 'user', content: 'colour \u001b[31mred\u001b[0m\u0007' }] },
      });
      assert.notEqual(chat.body.code, 'VALIDATION_FAILED', JSON.stringify(chat.body));
    });
  });

  describe('paths the router cannot read', () => {
    for (const [label, path, status] of [
      ['broken percent-encoding', '/api/os/workspaces/%E0%A4%A', 400],
      ['a lone percent sign', '/api/os/workspaces/%', 400],
      ['a path parameter over 200 characters', `/api/os/workspaces/ws_${'x'.repeat(300)}`, 414],
    ] as const) {
      it(`${label}: the problem shape with a correlation id, not Fastify's own JSON`, async () => {
        const response = await gw.request('GET', path, { apiKey });
        assert.equal(response.status, status);
        assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        assert.equal(response.body.code, status === 414 ? 'URI_TOO_LONG' : 'BAD_REQUEST');
        assert.equal(response.body.correlationId, response.headers.get('x-correlation-id'));
      });
    }
  });

  describe('prototype keys', () => {
    for (const [label, text] of [
      ['__proto__', '{"name":"x","__proto__":{"isAdmin":true}}'],
      ['nested __proto__', '{"name":"x","description":null,"a":{"__proto__":{"polluted":1}}}'],
      ['constructor.prototype', '{"name":"x","constructor":{"prototype":{"polluted":1}}}'],
    ]) {
      it(`a body with a ${label} key is a 400 and creates nothing`, async () => {
        const count = async () => (await gw.request('GET', '/api/os/workspaces', { apiKey })).body.data.length;
        const before = await count();
        const response = await gw.request('POST', '/api/os/workspaces', {
          apiKey,
          body: text,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(response.status, 400);
        assert.equal(response.body.code, 'BAD_REQUEST');
        assert.match(response.body.detail, /__proto__|constructor/);
        assert.equal(response.body.correlationId, response.headers.get('x-correlation-id'));
        assert.equal(await count(), before);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      });
    }

    it('a plain "constructor" field is still just an ignored unknown field', async () => {
      const response = await gw.request('POST', '/api/os/workspaces', {
        apiKey,
        body: '{"name":"ctor","constructor":"x"}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(response.status, 201);
    });
  });

  describe('a request without a Host header', () => {
    it('gets the problem shape and a correlation id', async () => {
      const { received } = await silentClient(gw, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n', 2000);
      const response = parseRawResponse(received);
      assert.equal(response.status, 400);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      const body = JSON.parse(response.body);
      assert.equal(body.code, 'BAD_REQUEST');
      assert.match(body.detail, /Host/);
      assert.equal(body.correlationId, response.headers['x-correlation-id']);
    });

    it('HTTP/1.0, which has no Host requirement, is served', async () => {
      const { received } = await silentClient(gw, 'GET /health HTTP/1.0\r\n\r\n', 2000);
      assert.equal(parseRawResponse(received).status, 200);
    });
  });
});
