// POST /api/llm/v1/rerank on the `local` engine: node-llama-cpp's ranking context needs
// a GGUF with a classification head (a reranker: cls.weight or cls.output.weight). The
// suite's tiny GGUF is a llama-architecture chat model without one (and llama.cpp does
// not load such a head for that architecture), so what is tested is the refusal: a clear
// 400 saying the model cannot rerank, the model still serving chat afterwards.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { TEST_TMP } from '../helpers/paths.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';
import { eventually } from '../helpers/eventually.js';
import { seedWorld, type World } from '../helpers/world.js';

describe('rerank on the local engine (tiny GGUF)', () => {
  let gw: TestGateway;
  let modelsDir: string;
  let world: World;

  before(async () => {
    modelsDir = mkdtempSync(path.join(TEST_TMP, 'models-'));
    writeTinyGguf(path.join(modelsDir, 'tiny-chat.gguf'), { seed: 1 });
    gw = await startGateway({ GATEWAY_LOCAL_ENGINE: 'on', GATEWAY_LOCAL_THREADS: '1', GATEWAY_MODELS_DIR: modelsDir });
    world = await seedWorld(gw, 'local-rerank');
    await eventually(
      'the local engine lists the model',
      async () => {
        const list = await gw.request('GET', '/api/llm/v1/models', { apiKey: world.a.key.key });
        return list.body.data.some((m: { id: string }) => m.id === 'tiny-chat');
      },
      30_000,
    );
  });
  after(async () => {
    await gw?.close();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it('answers 400 for a model without a ranking head, and the model is not taken for broken', async () => {
    const list = await gw.request('GET', '/api/llm/v1/models', { apiKey: world.a.key.key });
    assert.equal(list.body.data.find((m: { id: string }) => m.id === 'tiny-chat').kind, undefined, 'a chat GGUF is no reranker');
    const response = await gw.request('POST', '/api/llm/v1/rerank', {
      apiKey: world.a.key.key,
      json: { model: 'tiny-chat', query: 'hello', documents: ['hello world', 'the'] },
    });
    assert.equal(response.status, 400, response.text);
    assert.match(response.body.detail, /^This model cannot rerank: Computing rankings is not supported for this model/);
    const chat = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: world.a.key.key,
      json: { model: 'tiny-chat', max_tokens: 4, temperature: 0, messages: [{ role: 'user', content: 'hello' }] },
    });
    assert.equal(chat.status, 200, chat.text);
  });
});
