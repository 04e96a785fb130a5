// POST /api/llm/v1/completions (legacy) over real fake engines: `openai` nodes answer
// on their own /v1/completions (fields passed through), `ollama` through chat (the
// prompt as one user message); JSON and streamed in OpenAI's `text_completion`
// shape; bounds as 400s naming the field; usage recorded; the security cases.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedWorld, type World } from '../helpers/world.js';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver, openStream, payloads, usageRows } from './chat-support.js';

const PATH = '/api/llm/v1/completions';

describe('llm legacy completions', () => {
  let gw: TestGateway;
  let openai: FakeEngine;
  let ollama: FakeEngine;
  let dying: FakeEngine;
  let privateA: FakeEngine;
  let world: World;
  let key: string;

  before(async () => {
    openai = await startFakeOpenAI({ models: ['cmpl-oa'] });
    ollama = await startFakeOllama({ models: ['cmpl-ol:latest'] });
    dying = await startFakeOpenAI({ models: ['cmpl-dying'], dieAfterTokens: 2 });
    privateA = await startFakeOpenAI({ models: ['private-a'] });
    gw = await gatewayOver([openai, ollama, dying]);
    world = await seedWorld(gw, 'cmpl');
    key = world.a.key.key;
    const node = await gw.request('POST', '/api/llm/v1/nodes', {
      token: world.platform.admin.token,
      json: { name: 'for-a', engine: 'openai', url: privateA.url, tenantIds: [world.a.tenantId] },
    });
    assert.equal(node.status, 201, node.text);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([openai, ollama, dying, privateA].map((f) => f?.close()));
  });

  const complete = (json: unknown, credential: { apiKey?: string; token?: string } = { apiKey: key }) =>
    gw.request('POST', PATH, { ...credential, json });
  const streamFrames = async (json: object) => {
    const stream = await openStream(gw, PATH, { ...json, stream: true }, { 'x-api-key': key });
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    return payloads(await stream.end());
  };
  const textOf = (frames: any[], index = 0) =>
    frames
      .filter((f) => f !== '[DONE]' && f.choices?.length)
      .filter((f) => f.choices[0].index === index)
      .map((f) => f.choices[0].text)
      .join('');

  it("answers on an openai node's own /v1/completions, in OpenAI's shape, with the spec's defaults", async () => {
    const response = await complete({ model: 'cmpl-oa', prompt: 'Once upon a time' });
    assert.equal(response.status, 200, response.text);
    const body = response.body;
    assert.match(body.id, /^cmpl-[0-9a-f]{32}$/);
    assert.equal(body.object, 'text_completion');
    assert.equal(body.model, 'cmpl-oa');
    assert.ok(Number.isInteger(body.created));
    assert.deepEqual(body.choices, [{ text: 'Fake completion of: Once upon a time', index: 0, logprobs: null, finish_reason: 'stop' }]);
    assert.deepEqual(body.usage, { prompt_tokens: 4, completion_tokens: 7, total_tokens: 11 });
    const sent = openai.requests.at(-1)!;
    assert.equal(sent.path, '/v1/completions');
    assert.equal(sent.body.prompt, 'Once upon a time');
    assert.equal(sent.body.max_tokens, 1024);
    assert.equal(sent.body.temperature, 0.7);
  });

  it('passes the sampling fields, echo and logprobs through to openai nodes; n choices per prompt, in order', async () => {
    const response = await complete({
      model: 'cmpl-oa',
      prompt: ['one', 'two'],
      n: 2,
      max_tokens: 3,
      temperature: 0,
      top_p: 0.5,
      stop: '\n',
      seed: 7,
      user: 'u-1',
      echo: true,
      logprobs: 1,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      suffix: null,
      best_of: 1,
    });
    assert.equal(response.status, 200, response.text);
    const sent = openai.requests.at(-1)!.body;
    assert.deepEqual(
      { ...sent, model: undefined },
      {
        model: undefined,
        prompt: ['one', 'two'],
        n: 2,
        max_tokens: 3,
        temperature: 0,
        top_p: 0.5,
        stop: ['\n'],
        seed: 7,
        user: 'u-1',
        echo: true,
        logprobs: 1,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        stream: false,
      },
    );
    assert.deepEqual(
      response.body.choices.map((c: any) => [c.index, c.text, c.finish_reason]),
      [
        [0, 'oneFake completion of:', 'length'],
        [1, 'oneFake completion of:', 'length'],
        [2, 'twoFake completion of:', 'length'],
        [3, 'twoFake completion of:', 'length'],
      ],
    );
    assert.deepEqual(response.body.choices[0].logprobs.token_logprobs, [-0.5, -0.5, -0.5, -0.5]);
  });

  it('maps onto chat for engines without completions: the prompt as one user message, echo and several prompts too', async () => {
    const response = await complete({ model: 'cmpl-ol:latest', prompt: 'hello there' });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.choices, [{ text: 'Fake answer to: hello there', index: 0, logprobs: null, finish_reason: 'stop' }]);
    const sent = ollama.requests.at(-1)!;
    assert.equal(sent.path, '/api/chat');
    assert.deepEqual(sent.body.messages, [{ role: 'user', content: 'hello there' }]);

    const echoed = await complete({ model: 'cmpl-ol:latest', prompt: ['a b', 'c d'], echo: true, max_tokens: 2 });
    assert.equal(echoed.status, 200, echoed.text);
    assert.deepEqual(
      echoed.body.choices.map((c: any) => [c.index, c.text, c.finish_reason]),
      [
        [0, 'a bFake answer', 'length'],
        [1, 'c dFake answer', 'length'],
      ],
    );
    assert.ok(echoed.body.usage.prompt_tokens > 0 && echoed.body.usage.completion_tokens > 0);

    // n: one chat per prompt and choice, prompt by prompt.
    const before = ollama.requests.filter((r) => r.path === '/api/chat').length;
    const many = await complete({ model: 'cmpl-ol:latest', prompt: ['p1', 'p2'], n: 2 });
    assert.equal(many.status, 200, many.text);
    assert.deepEqual(
      many.body.choices.map((c: any) => [c.index, c.text]),
      [
        [0, 'Fake answer to: p1'],
        [1, 'Fake answer to: p1'],
        [2, 'Fake answer to: p2'],
        [3, 'Fake answer to: p2'],
      ],
    );
    assert.equal(ollama.requests.filter((r) => r.path === '/api/chat').length - before, 4);
    assert.equal(ollama.requests.at(-1)!.body.n, undefined, 'n is not forwarded to a chat');

    const chats = () => ollama.requests.filter((r) => r.path === '/api/chat').length;
    const asked = chats();
    const logprobs = await complete({ model: 'cmpl-ol:latest', prompt: 'x', logprobs: 2 });
    assert.equal(logprobs.status, 400, logprobs.text);
    assert.match(logprobs.body.detail, /^logprobs: the ollama engine/);
    const twoStreamed = await complete({ model: 'cmpl-ol:latest', prompt: ['x', 'y'], stream: true });
    assert.equal(twoStreamed.status, 400, twoStreamed.text);
    assert.match(twoStreamed.body.detail, /^prompt: the ollama engine .* one prompt at a time/);
    const nStreamed = await complete({ model: 'cmpl-ol:latest', prompt: 'x', n: 2, stream: true });
    assert.equal(nStreamed.status, 400, nStreamed.text);
    assert.match(nStreamed.body.detail, /^n: the ollama engine .* one choice at a time/);
    assert.equal(chats(), asked, 'nothing reached the engine');
  });

  it('streams text_completion frames, a last frame with the finish reason, the usage frame when asked for, then [DONE]', async () => {
    for (const [model, answer] of [
      ['cmpl-oa', 'Fake completion of: hello there'],
      ['cmpl-ol:latest', 'Fake answer to: hello there'],
    ] as const) {
      const frames = await streamFrames({ model, prompt: 'hello there', stream_options: { include_usage: true } });
      assert.equal(frames.at(-1), '[DONE]');
      const chunks = frames.slice(0, -1);
      assert.ok(chunks.every((f: any) => f.object === 'text_completion' && /^cmpl-/.test(f.id) && f.model === model));
      assert.ok(!chunks.some((f: any) => 'rag_snippets' in f || f.object === 'rag_metadata'), 'no metadata frame');
      assert.equal(textOf(frames), answer);
      const usage = chunks.at(-1);
      assert.deepEqual(usage.choices, []);
      assert.ok(usage.usage.prompt_tokens > 0 && usage.usage.completion_tokens > 0);
      const last = chunks.at(-2);
      assert.deepEqual(last.choices, [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }]);
      assert.ok(chunks.slice(0, -2).every((f: any) => f.choices[0].finish_reason === null));
    }
    // The chat mapping echoes the prompt first; max_tokens cuts with `length`.
    const echoed = await streamFrames({ model: 'cmpl-ol:latest', prompt: 'echo me', echo: true, max_tokens: 2 });
    assert.equal(textOf(echoed), 'echo meFake answer');
    assert.equal(echoed.at(-2).choices[0].finish_reason, 'length');
    // Several prompts and n on an openai node: each choice by its index.
    const many = await streamFrames({ model: 'cmpl-oa', prompt: ['p1', 'p2'], n: 2, max_tokens: 2 });
    for (const index of [0, 1, 2, 3]) assert.equal(textOf(many, index), 'Fake completion');
    assert.equal(many.filter((f: any) => f !== '[DONE]' && f.choices[0]?.finish_reason === 'length').length, 4);
  });

  it('ends a stream whose engine dies mid-answer with an in-band error frame and [DONE]', async () => {
    const frames = await streamFrames({ model: 'cmpl-dying', prompt: 'a long story' });
    assert.equal(frames.at(-1), '[DONE]');
    assert.equal(frames.at(-2).error.code, 'engine_error');
    assert.equal(textOf(frames), 'Fake completion');
  });

  it('refuses bad input with a 400 naming the field, before any engine is asked', async () => {
    const completions = () => openai.requests.filter((r) => r.path === '/v1/completions').length;
    const asked = completions();
    const cases: [unknown, RegExp][] = [
      [{ model: 'cmpl-oa' }, /prompt/],
      [{ model: 'cmpl-oa', prompt: [] }, /^prompt: must not be empty/],
      [{ model: 'cmpl-oa', prompt: [1, 2] }, /^prompt\[0\]: must be a string: token-id prompts/],
      [{ model: 'cmpl-oa', prompt: ['ok', 'nul \u0000'] }, /^prompt\[1\]: must not contain NUL/],
      [{ model: 'cmpl-oa', prompt: Array.from({ length: 129 }, () => 'p') }, /^prompt: at most 128 prompts/],
      [{ model: 'cmpl-oa', prompt: ['a', 'b'], n: 65 }, /^n: prompts × n must be at most 128/],
      [{ model: 'cmpl-oa', prompt: 'x', n: 0 }, /n/],
      [{ model: 'cmpl-oa', prompt: 'x', max_tokens: 8193 }, /max_tokens/],
      [{ model: 'cmpl-oa', prompt: 'x', max_tokens: 0 }, /max_tokens/],
      [{ model: 'cmpl-oa', prompt: 'x', temperature: 2.5 }, /temperature/],
      [{ model: 'cmpl-oa', prompt: 'x', top_p: 1.5 }, /top_p/],
      [{ model: 'cmpl-oa', prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }, /stop/],
      [{ model: 'cmpl-oa', prompt: 'x', suffix: 'after' }, /suffix/],
      [{ model: 'cmpl-oa', prompt: 'x', best_of: 3 }, /best_of/],
      [{ model: 'cmpl-oa', prompt: 'x', logprobs: 6 }, /logprobs/],
      [{ model: 'cmpl-oa', prompt: 'x', echo: 'yes' }, /echo/],
      [{ model: 'cmpl-oa', prompt: 'x', stream: 'yes' }, /stream/],
      [{ model: 'cmpl-oa', prompt: 'x', seed: 1.5 }, /seed/],
      [{ model: 'no-such-model', prompt: 'x' }, /^model: unknown model/],
    ];
    for (const [json, detail] of cases) {
      const response = await complete(json);
      assert.equal(response.status, 400, `${JSON.stringify(json).slice(0, 80)}: ${response.text}`);
      assert.match(response.body.detail, detail, JSON.stringify(json).slice(0, 80));
    }
    assert.equal(completions(), asked);
  });

  it('records usage under the endpoint "completions", streamed or not', async () => {
    const { key: ownKey } = await createApiKey(gw, world.b.tenantId, 'usage');
    assert.equal((await complete({ model: 'cmpl-oa', prompt: 'count me' }, { apiKey: ownKey })).status, 200);
    const stream = await openStream(gw, PATH, { model: 'cmpl-ol:latest', prompt: 'count me', stream: true }, { 'x-api-key': ownKey });
    await stream.end();
    const rows = (await usageRows(gw, world.b.tenantId)).filter((r) => r.endpoint === 'completions');
    assert.deepEqual(
      rows.map((r) => [r.model, r.stream, r.status]),
      [
        ['cmpl-oa', false, 'ok'],
        ['cmpl-ol:latest', true, 'ok'],
      ],
    );
    assert.ok(rows.every((r) => r.prompt_tokens > 0 && r.completion_tokens > 0));
  });

  it("refuses no credential and a revoked key with 401, and another tenant's model as chat does", async () => {
    assert.equal((await gw.request('POST', PATH, { json: { model: 'cmpl-oa', prompt: 'x' } })).status, 401);
    const revoked = await createApiKey(gw, world.a.tenantId, 'revoked');
    const admin: Principal = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, revoked.id, 'revoked');
    assert.equal((await complete({ model: 'cmpl-oa', prompt: 'x' }, { apiKey: revoked.key })).status, 401);

    assert.equal((await complete({ model: 'private-a', prompt: 'x' }, { token: world.a.member.token })).status, 200);
    const asB = await complete({ model: 'private-a', prompt: 'x' }, { apiKey: world.b.key.key });
    const chatAsB = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: world.b.key.key,
      json: { model: 'private-a', messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(asB.status, 400, asB.text);
    assert.equal(asB.body.detail, chatAsB.body.detail);
    assert.equal(privateA.requests.filter((r) => r.path === '/v1/completions').length, 1, "B's call never reached A's node");
  });
});
