// The local engine's pull on its own, with the trial load replaced: which failures
// are the caller's file (`rejected`) and which are the node's own (`unreachable`,
// counted against the node), whatever the trial load reports.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { ModelCatalog } from '../../src/engines/local/catalog.js';
import { pullModel, type PullDependencies } from '../../src/engines/local/pull.js';
import { EngineError } from '../../src/engines/types.js';
import { tinyGgufBytes } from '../helpers/tiny-gguf.js';

describe('local pull: what the trial load says', () => {
  let server: http.Server;
  let url: string;
  let dir: string;
  before(async () => {
    const model = tinyGgufBytes({ seed: 1 });
    server = http.createServer((_req, res) => res.writeHead(200, { 'content-length': model.length }).end(model));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tiny.gguf`;
    dir = mkdtempSync(path.join(tmpdir(), 'gateway-pull-'));
  });
  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const pull = async (trialLoad: PullDependencies['trialLoad']) => {
    const deps: PullDependencies = { catalog: new ModelCatalog(dir), maxBytes: 1 << 30, timeoutMs: 5000, log: () => {}, trialLoad };
    try {
      for await (const _ of pullModel({ model: 'tiny', url, signal: new AbortController().signal }, deps));
      return undefined;
    } catch (error) {
      return error as EngineError;
    }
  };

  it("a file llama.cpp refuses is the caller's: rejected, never retryable", async () => {
    const error = await pull(async () => {
      throw new Error('unsupported model architecture');
    });
    assert.ok(error instanceof EngineError);
    assert.equal(error.failure, 'rejected');
    assert.equal(error.retryable, false);
    assert.match(error.message, /unsupported model architecture/);
  });

  it("a local engine that cannot start is the node's failure: unreachable, counted against the node", async () => {
    const error = await pull(async () => {
      throw new EngineError('unreachable', 'The local engine process did not start: spawn ENOMEM');
    });
    assert.ok(error instanceof EngineError);
    assert.equal(error.failure, 'unreachable');
    assert.equal(error.retryable, true);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.gguf')),
      [],
      'nothing was kept',
    );
  });

  it('a file the trial load accepts is placed', async () => {
    assert.equal(await pull(async () => {}), undefined);
    assert.ok(readdirSync(dir).includes('tiny.gguf'));
  });
});
