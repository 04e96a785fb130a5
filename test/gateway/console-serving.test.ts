// The web console as the gateway serves it (src/gateway/console.ts), over real HTTP,
// from a built directory this test makes itself: index.html, a hashed asset with its
// .br and .gz siblings, a favicon. Cache rules, precompressed files by Accept-Encoding,
// the security headers, the index.html fallback for client-side routes (and where it
// never applies), GATEWAY_CONSOLE=off, a missing build, and path traversal.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { TEST_TMP } from '../helpers/paths.js';
import { rawRequest } from './support.js';
import { buildApp } from '../../src/gateway/app.js';
import { CONSOLE_CSP } from '../../src/gateway/console.js';
import { loadTls } from '../../src/platform/tls.js';
import { loadConfig } from '../../src/platform/config.js';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const SECURITY_HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'x-frame-options': 'DENY',
};
const HTML = 'text/html, application/xhtml+xml, */*;q=0.8';
const INDEX = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Gateway</title>\n<script type="module" src="/assets/app-1a2b3c4d.js"></script></head>\n<body><div id="app"></div></body></html>\n`;
const APP_JS = `export const greeting = "hello";\n${'console.log(greeting);\n'.repeat(200)}`;
const APP_CSS = 'body { margin: 0 }\n'.repeat(50);
const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"></svg>';
const SECRET = 'TOP-SECRET-outside-the-console';

/** A build as `npm run build` makes it, plus what must never be served: a dotfile, a link out, a file beside the directory. */
function fakeBuild(): { root: string; dir: string } {
  const root = mkdtempSync(path.join(TEST_TMP, 'console-'));
  const dir = path.join(root, 'console');
  mkdirSync(path.join(dir, 'assets'), { recursive: true });
  const write = (file: string, text: string, precompressed: boolean) => {
    writeFileSync(path.join(dir, file), text);
    if (!precompressed) return;
    writeFileSync(path.join(dir, `${file}.gz`), gzipSync(text, { level: 9 }));
    writeFileSync(path.join(dir, `${file}.br`), brotliCompressSync(text));
  };
  write('index.html', INDEX, true);
  write('assets/app-1a2b3c4d.js', APP_JS, true);
  write('assets/app-5e6f7a8b.css', APP_CSS, false);
  write('favicon.svg', FAVICON, false);
  writeFileSync(path.join(dir, '.env'), SECRET);
  writeFileSync(path.join(root, 'secret.txt'), SECRET);
  symlinkSync(path.join(root, 'secret.txt'), path.join(dir, 'linked.txt'));
  symlinkSync(root, path.join(dir, 'assets', 'up'));
  return { root, dir };
}

interface BytesResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

/** A request whose answer is kept as bytes (fetch would decode a compressed body). */
function requestBytes(url: string, requestPath: string, headers: Record<string, string> = {}, method = 'GET'): Promise<BytesResponse> {
  const target = new URL(requestPath, url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(target, { method, headers, agent: false, rejectUnauthorized: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function assertSecurityHeaders(headers: http.IncomingHttpHeaders | Headers, label: string) {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) assert.equal(get(name), value, `${label}: ${name}`);
}

describe('web console: serving the built directory', () => {
  let gw: TestGateway;
  let build: { root: string; dir: string };

  before(async () => {
    build = fakeBuild();
    gw = await startGateway({ GATEWAY_CONSOLE_DIR: build.dir, GATEWAY_TRUST_PROXY: 'on' });
  });
  after(async () => {
    await gw.close();
    rmSync(build.root, { recursive: true, force: true });
  });

  it('answers / and /index.html with index.html, never stored, with the security headers and no HSTS over plain HTTP', async () => {
    assert.equal(CONSOLE_CSP, CSP);
    for (const page of ['/', '/index.html', '/?next=/keys']) {
      const response = await gw.request('GET', page);
      assert.equal(response.status, 200, page);
      assert.equal(response.text, INDEX, page);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html; charset=utf-8$/, page);
      assert.equal(response.headers.get('cache-control'), 'no-store', page);
      assertSecurityHeaders(response.headers, page);
      assert.equal(response.headers.get('strict-transport-security'), null, `${page}: no HSTS over HTTP`);
      assert.ok(response.headers.get('x-correlation-id'), `${page}: the edge's headers too`);
    }
  });

  it('serves hashed assets immutable and other files with a short cache, each with the security headers', async () => {
    const js = await gw.request('GET', '/assets/app-1a2b3c4d.js', { headers: { 'accept-encoding': 'identity' } });
    assert.equal(js.status, 200);
    assert.equal(js.text, APP_JS);
    assert.match(js.headers.get('content-type') ?? '', /^(text|application)\/javascript; charset=utf-8$/);
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assertSecurityHeaders(js.headers, 'asset');
    const css = await gw.request('GET', '/assets/app-5e6f7a8b.css');
    assert.equal(css.status, 200);
    assert.equal(css.text, APP_CSS);
    assert.equal(css.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const favicon = await gw.request('GET', '/favicon.svg');
    assert.equal(favicon.status, 200);
    assert.equal(favicon.text, FAVICON);
    assert.equal(favicon.headers.get('cache-control'), 'public, max-age=3600');
    assertSecurityHeaders(favicon.headers, 'favicon');
    // HEAD answers the same headers and no body.
    const head = await requestBytes(gw.url, '/assets/app-1a2b3c4d.js', {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.bytes.length, 0);
    assert.equal(head.headers['cache-control'], 'public, max-age=31536000, immutable');
  });

  it('sends the precompressed sibling the client accepts (br first), the plain file otherwise, always with Vary: Accept-Encoding', async () => {
    const cases: Array<[string, string | undefined, (b: Buffer) => Buffer]> = [
      ['br, gzip, deflate', 'br', brotliDecompressSync],
      ['gzip, br;q=0.5', 'gzip', gunzipSync],
      ['gzip', 'gzip', gunzipSync],
      ['identity', undefined, (b) => b],
      ['', undefined, (b) => b],
    ];
    for (const [file, original] of [
      ['/assets/app-1a2b3c4d.js', APP_JS],
      ['/', INDEX],
    ] as const) {
      for (const [acceptEncoding, encoding, decode] of cases) {
        const label = `${file} with Accept-Encoding "${acceptEncoding}"`;
        const response = await requestBytes(gw.url, file, acceptEncoding ? { 'accept-encoding': acceptEncoding } : {});
        assert.equal(response.status, 200, label);
        assert.equal(response.headers['content-encoding'], encoding, label);
        assert.equal(decode(response.bytes).toString('utf8'), original, label);
        if (encoding) assert.ok(response.bytes.length < Buffer.byteLength(original), `${label}: the compressed file was sent`);
        assert.match(String(response.headers.vary), /accept-encoding/i, label);
        assert.match(String(response.headers['content-type']), file === '/' ? /^text\/html/ : /javascript/, label);
      }
    }
    // A file built without siblings is sent as it is, still varying by encoding.
    const css = await requestBytes(gw.url, '/assets/app-5e6f7a8b.css', { 'accept-encoding': 'br, gzip' });
    assert.equal(css.headers['content-encoding'], undefined);
    assert.equal(css.bytes.toString('utf8'), APP_CSS);
    assert.match(String(css.headers.vary), /accept-encoding/i);
  });

  it("answers a browser's navigation to any client-side route with index.html (GET and HEAD)", async () => {
    for (const page of ['/keys', '/workspaces/ws_01ARZ3NDEKTSV4RRFFQ69G5FAV', '/documents/doc_1?tab=chunks', '/a/b/c/', '/assets']) {
      const response = await gw.request('GET', page, { headers: { accept: HTML } });
      assert.equal(response.status, 200, page);
      assert.equal(response.text, INDEX, page);
      assert.equal(response.headers.get('cache-control'), 'no-store', page);
      assertSecurityHeaders(response.headers, `fallback ${page}`);
      const compressed = await requestBytes(gw.url, page, { accept: HTML, 'accept-encoding': 'br' });
      assert.equal(compressed.headers['content-encoding'], 'br', `${page}: precompressed too`);
      assert.equal(brotliDecompressSync(compressed.bytes).toString('utf8'), INDEX);
    }
    const head = await requestBytes(gw.url, '/keys', { accept: 'text/html' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.bytes.length, 0);
    assert.equal(head.headers['cache-control'], 'no-store');
  });

  it('keeps the JSON 404 for the API, the gateway pages, non-GET methods and requests that do not ask for HTML', async () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ['GET', '/api/os/no-such-thing', { accept: HTML }],
      ['GET', '/api', { accept: HTML }],
      ['GET', '/API/Auth/nothing', { accept: HTML }],
      ['GET', '//api//os//nothing', { accept: HTML }],
      ['GET', '/api/llm/v1/nothing', { accept: HTML }],
      ['GET', '/health/deep', { accept: HTML }],
      ['GET', '/metrics', { accept: HTML }],
      ['GET', '/openapi.json/x', { accept: HTML }],
      ['GET', '/keys', { accept: 'application/json' }],
      ['GET', '/keys', {}],
      ['GET', '/keys', { accept: '*/*' }],
      ['GET', '/assets/app-00000000.js', { accept: '*/*' }],
      ['POST', '/keys', { accept: HTML }],
      ['DELETE', '/', { accept: HTML }],
    ];
    for (const [method, page, headers] of cases) {
      const label = `${method} ${page} ${JSON.stringify(headers)}`;
      const response = await rawRequest(gw, method, page, { headers });
      assert.equal(response.status, 404, label);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/, label);
      assert.equal(response.body.code, 'NOT_FOUND', label);
      assert.match(response.body.detail, /^No route for /, label);
      assert.equal(response.headers['content-security-policy'], undefined, `${label}: not a console answer`);
    }
    // A known API route is untouched by Accept: text/html.
    const health = await gw.request('GET', '/health', { headers: { accept: HTML } });
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    assert.equal(health.headers.get('content-security-policy'), null);
  });

  it('never serves a file outside the directory, a dotfile or a link, however the path is written', async () => {
    const paths = [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/assets/%2e%2e/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/%2E%2E%2F%2E%2E%2Fsecret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%5c..%5csecret.txt',
      '/assets/..\\..\\secret.txt',
      '/assets/%252e%252e/%252e%252e/secret.txt',
      '/assets/up/secret.txt',
      '/assets/up/console/index.html',
      '/linked.txt',
      '/.env',
      '/%2eenv',
      '/assets/app-1a2b3c4d.js%00.html',
      '/index.html.br',
      '/assets/app-1a2b3c4d.js.gz',
    ];
    for (const page of paths) {
      const variants: Record<string, string>[] = [{}, { accept: HTML }, { accept: HTML, 'accept-encoding': 'br, gzip' }];
      for (const headers of variants) {
        const label = `${page} ${JSON.stringify(headers)}`;
        const response = await rawRequest(gw, 'GET', page, { headers });
        assert.ok(!response.text.includes(SECRET), `${label}: leaked the file outside`);
        // Either the JSON 404, or (a navigation) the console's own index.html.
        if (response.status === 200) {
          assert.equal('accept' in headers, true, `${label}: only a navigation gets a page`);
          assert.equal(response.headers['cache-control'], 'no-store', label);
        } else assert.ok(response.status === 404 || response.status === 400, `${label}: ${response.status}`);
      }
    }
  });

  it('takes X-Forwarded-Proto: https from a trusted proxy as TLS: HSTS', async () => {
    const response = await gw.request('GET', '/', { headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(response.headers.get('strict-transport-security'), 'max-age=31536000');
  });

  it('lists the console routes as public and leaves them out of the API document', async () => {
    const consoleRoutes = gw.app.routeTable.filter((r) => r.url === '/' || r.url === '/index.html' || r.url.startsWith('/assets/'));
    assert.deepEqual(
      [...new Set(consoleRoutes.map((r) => r.url))].sort(),
      ['/', '/assets/app-1a2b3c4d.js', '/assets/app-5e6f7a8b.css', '/index.html'],
      'one route per built file: no siblings, links or dotfiles',
    );
    assert.ok(consoleRoutes.every((r) => r.access === 'public' && r.hidden));
    const doc = (await gw.request('GET', '/openapi.json')).body;
    const paths = Object.keys(doc.paths);
    assert.ok(paths.length > 50);
    assert.deepEqual(
      paths.filter((p) => !p.startsWith('/api/') && p !== '/health' && p !== '/metrics'),
      [],
    );
  });
});

describe('web console over TLS', () => {
  it('adds Strict-Transport-Security to every console answer', async () => {
    const build = fakeBuild();
    const gw = await startGateway({ GATEWAY_CONSOLE_DIR: build.dir });
    const tls = await loadTls({ ...gw.ctx.config, tls: { enabled: true, certFile: undefined, keyFile: undefined } });
    assert.ok(tls);
    const app = await buildApp(gw.ctx, {
      https: { key: tls.key, cert: tls.cert },
      logStream: new Writable({ write: (_c, _e, done) => done() }),
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      const url = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      for (const [page, headers] of [
        ['/', {}],
        ['/assets/app-1a2b3c4d.js', {}],
        ['/keys', { accept: HTML }],
      ] as const) {
        const response = await requestBytes(url, page, headers);
        assert.equal(response.status, 200, page);
        assert.equal(response.headers['strict-transport-security'], 'max-age=31536000', page);
        assertSecurityHeaders(response.headers, page);
      }
    } finally {
      await app.close();
      await gw.close();
      rmSync(build.root, { recursive: true, force: true });
    }
  });
});

describe('web console: off, or not built', () => {
  it('reads GATEWAY_CONSOLE (on or off, on by default) and GATEWAY_CONSOLE_DIR (dist/console of the package by default)', () => {
    const defaults = loadConfig({}).console;
    assert.equal(defaults.enabled, true);
    assert.equal(defaults.dir, path.resolve('dist', 'console'));
    assert.equal(loadConfig({ GATEWAY_CONSOLE: 'OFF' }).console.enabled, false);
    assert.equal(loadConfig({ GATEWAY_CONSOLE_DIR: 'some/where' }).console.dir, path.resolve('some/where'));
    assert.throws(() => loadConfig({ GATEWAY_CONSOLE: 'yes' }), /Invalid configuration: GATEWAY_CONSOLE must be one of on, off/);
  });

  it('GATEWAY_CONSOLE=off removes it: / and client routes are plain 404s', async () => {
    const build = fakeBuild();
    const gw = await startGateway({ GATEWAY_CONSOLE: 'off', GATEWAY_CONSOLE_DIR: build.dir });
    try {
      for (const page of ['/', '/index.html', '/keys', '/assets/app-1a2b3c4d.js']) {
        const response = await gw.request('GET', page, { headers: { accept: HTML } });
        assert.equal(response.status, 404, page);
        assert.equal(response.body.code, 'NOT_FOUND', page);
        assert.match(response.body.detail, /^No route for GET /, page);
        assert.equal(response.headers.get('content-security-policy'), null, page);
      }
      assert.ok(!gw.app.routeTable.some((r) => r.url === '/' || r.url.startsWith('/assets/')));
      assert.doesNotMatch(gw.logs(), /console is not built/);
      assert.equal((await gw.request('GET', '/health')).status, 200);
    } finally {
      await gw.close();
      rmSync(build.root, { recursive: true, force: true });
    }
  });

  it('starts without a build, says so once in the log, and answers / with a 404 saying how to build it', async () => {
    const missing = path.join(TEST_TMP, `no-console-${process.pid}-${Date.now()}`);
    const gw = await startGateway({ GATEWAY_CONSOLE_DIR: missing });
    try {
      const lines = gw
        .logs()
        .split('\n')
        .filter((l) => l.includes('console is not built'));
      assert.equal(lines.length, 1, gw.logs());
      assert.match(lines[0]!, /npm run build/);
      assert.equal(JSON.parse(lines[0]!).level, 40, 'a warning');
      for (const [page, headers] of [
        ['/', {}],
        ['/', { accept: HTML }],
        ['/keys', { accept: HTML }],
      ] as const) {
        const response = await gw.request('GET', page, { headers });
        assert.equal(response.status, 404, page);
        assert.match(String(response.headers.get('content-type')), /^application\/problem\+json/);
        assert.match(response.body.detail, /console is not built.*npm run build/, page);
        assert.ok(response.body.correlationId);
      }
      // Everything else is as before.
      const api = await gw.request('GET', '/api/os/nothing', { headers: { accept: HTML } });
      assert.match(api.body.detail, /^No route for GET \/api\/os\/nothing/);
      assert.match((await gw.request('GET', '/keys')).body.detail, /^No route for GET \/keys/);
      assert.equal((await gw.request('GET', '/health')).status, 200);
    } finally {
      await gw.close();
    }
  });
});
