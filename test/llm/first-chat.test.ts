// Issue 26: the README's first chat on a machine with no model waited 21 s (the
// SDK's retries on a 503 with Retry-After) and then said "Retry later", which
// changed nothing; `auto` was listed as if something served it, and the empty local
// engine reported `healthy`. Now: a 503 that names the ways to a model and asks for
// no retry, `auto` listed only while something serves it, the local node `empty`.
// Then a node connected at runtime through the API serves the first chat.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { modelsNotice } from '../../src/server/models-notice.js';

describe('llm: the first chat, before any model', () => {
  let gw: TestGateway;
  let world: World;
  let engine: FakeEngine;

  before(async () => {
    engine = await startFakeOpenAI({ models: ['fake-model'] });
    // The built-in local engine on, over an empty models dir: a fresh install.
    gw = await startGateway({ GATEWAY_LOCAL_ENGINE: 'on', GATEWAY_LOCAL_THREADS: '1', GATEWAY_NODE_HEALTH_INTERVAL_SECONDS: '3600' });
    world = await seedWorld(gw, 'first-chat');
  });
  after(async () => {
    await gw?.close();
    await engine?.close();
  });

  const chat = (model = 'auto') =>
    gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: world.a.key.key,
      json: { model, messages: [{ role: 'user', content: 'Hello' }] },
    });
  const modelIds = async () => {
    const response = await gw.request('GET', '/api/llm/v1/models', { apiKey: world.a.key.key });
    assert.equal(response.status, 200, response.text);
    return response.body.data.map((m: { id: string }) => m.id);
  };
  const nodes = async () => {
    const response = await gw.request('GET', '/api/llm/v1/nodes', { token: world.platform.admin.token });
    assert.equal(response.status, 200, response.text);
    return response.body.data;
  };

  it('with no model anywhere: a 503 naming the ways to a model, without Retry-After; no `auto`; the local node `empty`', async () => {
    const answer = await chat();
    assert.equal(answer.status, 503, answer.text);
    assert.match(answer.body.detail, /No model is available to this tenant yet/);
    assert.match(answer.body.detail, /npx gateway models pull <name> --url/);
    assert.match(answer.body.detail, /POST \/api\/llm\/v1\/nodes/);
    assert.match(answer.body.detail, /README\.md#models/);
    assert.doesNotMatch(answer.body.detail, /Retry later/);
    assert.equal(answer.headers.get('retry-after'), null, 'nothing is coming: no Retry-After');
    assert.equal(answer.headers.get('x-should-retry'), 'false');
    assert.equal(answer.body.error.type, 'server_error');

    assert.equal((await modelIds()).includes('auto'), false, '`auto` stands for nothing yet');
    const local = (await nodes()).find((n: { engine: string }) => n.engine === 'local');
    assert.deepEqual({ status: local.health.status, models: local.health.models }, { status: 'empty', models: [] });
    assert.match(modelsNotice(gw.ctx.llm.nodes, 'npx gateway').join('\n'), /No models yet/);
  });

  it('the OpenAI SDK gives up at once with the detail (no retries of a 503 nothing will fix)', async () => {
    let sent = 0;
    const client = new OpenAI({
      baseURL: `${gw.url}/api/llm/v1`,
      apiKey: world.a.key.key,
      fetch: (url, init) => {
        sent++;
        return fetch(url, init);
      },
    });
    await assert.rejects(
      client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'Hello' }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError, String(error));
        assert.equal(error.status, 503);
        assert.match(error.message, /models pull/);
        return true;
      },
    );
    assert.equal(sent, 1, 'one request, not three');
  });

  it('a node connected through the API (the README way) serves the first chat; `auto` is listed from then on', async () => {
    const created = await gw.request('POST', '/api/llm/v1/nodes', {
      token: world.platform.admin.token,
      json: { name: 'vllm', engine: 'openai', url: engine.url },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.health.status, 'healthy');
    assert.deepEqual(await modelIds(), ['auto', 'fake-model', ...(gw.ctx.vector ? ['gateway-word-vectors-en'] : [])]);
    const answer = await chat();
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.model, 'fake-model');
    assert.match(modelsNotice(gw.ctx.llm.nodes, 'npx gateway').join('\n'), /models: {4}fake-model/);
  });

  it('while a node is only unreachable, a retry can help: 503 with Retry-After, and `auto` is not listed', async () => {
    await engine.close();
    await gw.ctx.llm.router.refresh();
    const answer = await chat();
    assert.equal(answer.status, 503, answer.text);
    assert.match(answer.body.detail, /cannot be reached/);
    assert.match(answer.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(answer.headers.get('x-should-retry'), null);
    assert.equal((await modelIds()).includes('auto'), false);
  });

  it('security: no credential and an unknown key are 401', async () => {
    assert.equal((await gw.request('GET', '/api/llm/v1/models')).status, 401);
    const unknown = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: 'rdk_unknown',
      json: { model: 'auto', messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(unknown.status, 401);
  });
});
