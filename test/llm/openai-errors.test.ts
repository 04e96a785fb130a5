// Errors on /api/llm/v1 as the official openai SDK reads them: the problem+json body
// also carries OpenAI's `error` member, from which the SDK builds err.message,
// err.type, err.param and err.code. Other areas' problems do not carry it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { gatewayOver } from './chat-support.js';

const messages = [{ role: 'user' as const, content: 'hello there' }];

describe('llm errors an SDK can read', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let failing: FakeEngine;
  let world: World;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['err-model'] });
    failing = await startFakeOpenAI({ models: ['err-failing'], status: 500 });
    gw = await gatewayOver([fake, failing]);
    world = await seedWorld(gw, 'errors');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([fake?.close(), failing?.close()]);
  });

  const caught = async (promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> => {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof OpenAI.APIError, String(error));
      return error;
    }
    assert.fail('expected an APIError');
  };

  it('400 validation: the message, the field as param, the type and our code', async () => {
    const err = await caught(client.chat.completions.create({ model: 'err-model', messages, max_tokens: 9000 }));
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.code, 'validation_failed');
    assert.equal(err.param, 'max_tokens');
    assert.match(err.message, /^400 Validation failed: max_tokens: /);
  });

  it('400 for an unknown model, naming the model field', async () => {
    const err = await caught(client.chat.completions.create({ model: 'no-such-model', messages }));
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.param, 'model');
    assert.match(err.message, /^400 .*no-such-model/);
    assert.equal(err.code, 'validation_failed');
  });

  it('401: an authentication_error with a readable message, not "(no body)"', async () => {
    const stranger = new OpenAI({ apiKey: 'rdk_not-a-real-key', baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
    const err = await caught(stranger.models.list());
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.status, 401);
    assert.equal(err.type, 'authentication_error');
    assert.match(err.code ?? '', /^[a-z_]+$/);
    assert.doesNotMatch(err.message, /no body/);
    assert.match(err.message, /^401 \S/);
  });

  it("404: the threads API's OpenAI wording reaches err.message", async () => {
    const err = await caught(client.beta.threads.retrieve('thread_doesnotexist0000000000'));
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.type, 'not_found_error');
    assert.equal(err.code, 'not_found');
    assert.equal(err.message, "404 No thread found with id 'thread_doesnotexist0000000000'.");
  });

  it('503: a server_error with Retry-After', async () => {
    const err = await caught(client.chat.completions.create({ model: 'err-failing', messages }));
    assert.ok(err instanceof OpenAI.InternalServerError);
    assert.equal(err.status, 503);
    assert.equal(err.type, 'server_error');
    assert.equal(err.code, 'service_unavailable');
    assert.match(err.message, /^503 Model "err-failing" is unavailable: .*Retry later\.$/);
    assert.ok(err.headers?.get('retry-after'));
  });

  it('over raw HTTP: the member sits beside the unchanged problem fields, any casing, no-route 404s included', async () => {
    const bad = await gw.request('POST', '/API/LLM/V1/chat/completions', { apiKey: world.a.key.key, json: { messages: [] } });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(bad.body.code, 'VALIDATION_FAILED');
    assert.deepEqual(bad.body.error, {
      message: bad.body.detail,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'validation_failed',
    });

    const noRoute = await gw.request('GET', '/api/llm/v1/no-such-route', { apiKey: world.a.key.key });
    assert.equal(noRoute.status, 404);
    assert.deepEqual(noRoute.body.error, { message: noRoute.body.detail, type: 'not_found_error', param: null, code: 'not_found' });

    const unauthenticated = await gw.request('GET', '/api/llm/v1/models');
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.body.error.type, 'authentication_error');
    assert.equal(unauthenticated.body.error.message, unauthenticated.body.detail);
  });

  it('over raw HTTP: other areas keep the bare problem', async () => {
    for (const [method, path, options] of [
      ['POST', '/api/auth/login', { json: { username: 1 } }],
      ['GET', '/api/os/workspaces', {}],
      ['GET', '/api/os/no-such-route', {}],
      ['GET', '/api/llm/v10/models', {}],
      ['GET', '/api/llm/models', {}],
    ] as const) {
      const response = await gw.request(method, path, options);
      assert.ok(response.status >= 400, `${method} ${path}: ${response.status}`);
      assert.equal(typeof response.body.code, 'string', `${method} ${path}`);
      assert.equal(response.body.error, undefined, `${method} ${path} has no error member`);
    }
  });
});
