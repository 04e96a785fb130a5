// The deny list holds at connect time too (DNS rebinding): a host name that passed
// the URL check when the node was saved but now resolves to a denied address is
// refused at every new connection, for engines and for model downloads alike.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { OpenAIEngine } from '../../src/engines/openai/adapter.js';
import { LocalEngine } from '../../src/engines/local/adapter.js';
import { EngineError } from '../../src/engines/types.js';
import { denyListFrom, guardedLookup } from '../../src/areas/llm/outbound/url-guard.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { TEST_TMP } from '../helpers/paths.js';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];

describe('deny list at connect time', () => {
  let fake: FakeEngine;
  let byName: string;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['m'] });
    byName = fake.url.replace('127.0.0.1', 'localhost');
  });
  after(() => fake.close());

  it('refuses a connection whose name resolves into the deny list, before any request is sent', async () => {
    const engine = new OpenAIEngine({ url: byName, timeoutMs: 5000, lookup: guardedLookup(denyListFrom(LOOPBACK)) });
    try {
      await assert.rejects(
        engine.listModels(AbortSignal.timeout(5000)),
        (error: unknown) => error instanceof EngineError && error.failure === 'unreachable',
      );
      assert.equal(fake.requests.length, 0);
    } finally {
      await engine.close();
    }
  });

  it('connects when the address is allowed', async () => {
    const engine = new OpenAIEngine({ url: byName, timeoutMs: 5000, lookup: guardedLookup(denyListFrom(['169.254.0.0/16'])) });
    try {
      assert.deepEqual(
        (await engine.listModels(AbortSignal.timeout(5000))).map((m) => m.id),
        ['m'],
      );
    } finally {
      await engine.close();
    }
  });

  it("a pull's own guard (a tenant admin's stricter one) replaces the engine's, for the URL and every connection", async () => {
    const modelsDir = mkdtempSync(path.join(TEST_TMP, 'guard-models-'));
    const engine = new LocalEngine({
      modelsDir,
      threads: 1,
      contextSize: 256,
      timeoutMs: 5000,
      pullMaxBytes: 1 << 20,
      lookup: guardedLookup(denyListFrom(['169.254.0.0/16'])),
    });
    const checked: string[] = [];
    const guard = { checkUrl: async (url: URL) => void checked.push(url.href), lookup: guardedLookup(denyListFrom(LOOPBACK)) };
    try {
      const frames = engine.pull({ model: 'y', url: `${byName}/y.gguf`, guard, signal: AbortSignal.timeout(5000) });
      await assert.rejects(
        async () => {
          for await (const frame of frames) assert.notEqual(frame.status, 'success');
          // Refused at connect time: the caller's URL, so nothing that counts against the node.
        },
        (error: unknown) => error instanceof EngineError && error.failure === 'download_failed' && /deny list/.test(error.message),
      );
      assert.deepEqual(checked, [`${byName}/y.gguf`]);
      assert.equal(fake.requests.filter((r) => r.path === '/y.gguf').length, 0);
    } finally {
      await engine.close();
      rmSync(modelsDir, { recursive: true, force: true });
    }
  });

  it('guards model downloads into the local engine the same way', async () => {
    const modelsDir = mkdtempSync(path.join(TEST_TMP, 'guard-models-'));
    const engine = new LocalEngine({
      modelsDir,
      threads: 1,
      contextSize: 256,
      timeoutMs: 5000,
      pullMaxBytes: 1 << 20,
      lookup: guardedLookup(denyListFrom(LOOPBACK)),
    });
    try {
      const frames = engine.pull({ model: 'x', url: `${byName}/x.gguf`, signal: AbortSignal.timeout(5000) });
      await assert.rejects(async () => {
        for await (const frame of frames) assert.notEqual(frame.status, 'success');
      });
      assert.equal(fake.requests.filter((r) => r.path === '/x.gguf').length, 0);
    } finally {
      await engine.close();
      rmSync(modelsDir, { recursive: true, force: true });
    }
  });
});
