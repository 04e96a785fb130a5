// The official `openai` SDK on the endpoints past chat: embeddings.create (its
// default asks for base64 and decodes it; float asked for explicitly),
// models.retrieve, and the legacy completions.create, JSON and streamed, over an
// `openai` node (its own /v1/completions) and an `ollama` node (mapped onto chat).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { seedTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { embeddingOf } from '../helpers/fake-engines/replies.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver } from './chat-support.js';

describe('openai SDK: embeddings, models.retrieve, legacy completions', () => {
  let gw: TestGateway;
  let openai: FakeEngine;
  let ollama: FakeEngine;
  let client: OpenAI;

  before(async () => {
    openai = await startFakeOpenAI({ models: ['sdk-oa'] });
    ollama = await startFakeOllama({ models: ['sdk-ol:latest'] });
    gw = await gatewayOver([openai, ollama]);
    const tenant = await seedTenant(gw, 'sdk-endpoints');
    client = new OpenAI({ apiKey: (await createApiKey(gw, tenant.tenantId, 'sdk')).key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([openai?.close(), ollama?.close()]);
  });

  const float32 = (v: number[]) => Array.from(new Float32Array(v));

  it('embeddings.create: the default (base64, decoded by the SDK) and float', async () => {
    for (const model of ['sdk-oa', 'sdk-ol:latest']) {
      const byDefault = await client.embeddings.create({ model, input: ['alpha', 'beta'] });
      assert.equal(byDefault.object, 'list');
      assert.equal(byDefault.model, model);
      assert.deepEqual(byDefault.data[0]?.embedding, float32(embeddingOf('alpha')));
      assert.deepEqual(byDefault.data[1]?.embedding, float32(embeddingOf('beta')));
      assert.ok(byDefault.usage.prompt_tokens > 0);

      const floats = await client.embeddings.create({ model, input: 'alpha', encoding_format: 'float' });
      assert.deepEqual(floats.data[0]?.embedding, embeddingOf('alpha'));
    }
    const shortened = await client.embeddings.create({ model: 'sdk-oa', input: 'alpha', dimensions: 4 });
    assert.equal(shortened.data[0]?.embedding.length, 4);
    await assert.rejects(client.embeddings.create({ model: 'sdk-ol:latest', input: 'alpha', dimensions: 4 }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.status, 400);
      return true;
    });
  });

  it('models.retrieve', async () => {
    const model = await client.models.retrieve('sdk-ol:latest');
    assert.deepEqual([model.id, model.object, model.owned_by], ['sdk-ol:latest', 'model', 'ollama']);
    await assert.rejects(client.models.retrieve('gone'), OpenAI.NotFoundError);
  });

  it('completions.create, JSON, on an openai node and mapped onto chat on an ollama node', async () => {
    const oa = await client.completions.create({ model: 'sdk-oa', prompt: 'Say this is a test', max_tokens: 7, temperature: 0 });
    assert.equal(oa.object, 'text_completion');
    assert.equal(oa.choices[0]?.text, 'Fake completion of: Say this is a');
    assert.equal(oa.choices[0]?.finish_reason, 'length');
    assert.equal(oa.usage?.total_tokens, (oa.usage?.prompt_tokens ?? 0) + (oa.usage?.completion_tokens ?? 0));

    const ol = await client.completions.create({ model: 'sdk-ol:latest', prompt: 'Say this is a test' });
    assert.equal(ol.choices[0]?.text, 'Fake answer to: Say this is a test');
    assert.equal(ol.choices[0]?.finish_reason, 'stop');
    assert.equal(ol.choices[0]?.logprobs, null);
  });

  it('completions.create, streamed', async () => {
    for (const [model, answer] of [
      ['sdk-oa', 'Fake completion of: Say this is a test'],
      ['sdk-ol:latest', 'Fake answer to: Say this is a test'],
    ] as const) {
      const stream = await client.completions.create({
        model,
        prompt: 'Say this is a test',
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        assert.equal(chunk.object, 'text_completion');
        // The loop of the SDK's README for this endpoint.
        text += chunk.choices[0]?.text ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(text, answer, model);
      assert.equal(finish, 'stop');
      assert.ok(usage && usage.completion_tokens > 0);
    }
  });
});
