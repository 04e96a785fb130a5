// `gateway models list|pull`: the local engine's models from the command line,
// pulled from a loopback server serving a GGUF file the test generates.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { tinyGgufBytes } from '../helpers/tiny-gguf.js';
import { TEST_TMP } from '../helpers/paths.js';
import { runCli } from './helpers.js';

describe('gateway models (local engine)', () => {
  let server: Server;
  let base: string;
  let dataDir: string;
  let env: Record<string, string>;
  const gguf = tinyGgufBytes({ seed: 11 });

  before(async () => {
    dataDir = mkdtempSync(path.join(TEST_TMP, 'cli-models-'));
    env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_LOCAL_THREADS: '1' };
    server = createServer((request, response) => {
      if (request.url === '/tiny.gguf') {
        response.setHeader('content-length', gguf.length);
        response.end(gguf);
      } else if (request.url === '/garbage.gguf') {
        response.end(Buffer.alloc(4096, 7));
      } else {
        response.statusCode = 404;
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  after(() => {
    server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists nothing on a fresh data dir, and says how to pull', async () => {
    const result = await runCli(['models', 'list'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /No models in .*models\. Pull one with: gateway models pull/);
  });

  it('pulls a GGUF model with progress, verifies its sha256, and lists it', async () => {
    const sha256 = createHash('sha256').update(gguf).digest('hex');
    const result = await runCli(['models', 'pull', 'tiny-chat', '--url', `${base}/tiny.gguf`, '--sha256', sha256], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /downloading .* MiB/);
    assert.match(result.stderr, /verifying sha256 digest/);
    assert.match(result.stdout, /Pulled tiny-chat/);
    const list = await runCli(['models', 'list', '--json'], env);
    assert.deepEqual(JSON.parse(list.stdout).data, ['tiny-chat']);
  });

  it('refuses a sha256 mismatch and a file that is not a GGUF model, keeping nothing', async () => {
    const mismatch = await runCli(['models', 'pull', 'other', '--url', `${base}/tiny.gguf`, '--sha256', 'a'.repeat(64)], env);
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.stderr, /error: SHA-256 mismatch/);
    const garbage = await runCli(['models', 'pull', 'garbage', '--url', `${base}/garbage.gguf`], env);
    assert.equal(garbage.code, 1);
    assert.match(garbage.stderr, /error: /);
    const list = await runCli(['models', 'list', '--json'], env);
    assert.deepEqual(JSON.parse(list.stdout).data, ['tiny-chat']);
    assert.deepEqual(
      readdirSync(path.join(dataDir, 'models')).filter((f) => f.endsWith('.gguf')),
      ['tiny-chat.gguf'],
    );
  });

  it('needs a name and --url, and names what is missing', async () => {
    const noUrl = await runCli(['models', 'pull', 'x'], env);
    assert.equal(noUrl.code, 1);
    assert.match(noUrl.stderr, /--url is required/);
    const unknown = await runCli(['models', 'frobnicate'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown command "models frobnicate"/);
  });
});
