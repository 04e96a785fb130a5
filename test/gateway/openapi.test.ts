// The API as an operator reads it: GET /openapi.json is a valid OpenAPI 3.1 document
// that lists every route the gateway registered, each with the credentials it takes
// and its declared access; /docs serves the interactive docs unless switched off;
// neither needs a credential, and the document carries nothing secret.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parse as parseYaml } from 'yaml';
import { startGateway, seedTenant, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { createApiKey } from './support.js';
import { uploadFiles } from '../os/documents-support.js';
import type { RouteAccess, RouteSummary } from '../../src/gateway/fastify-types.js';
import { BUILD_DOCUMENT } from '../../src/gateway/api-docs.js';
import { toPlainYaml } from '../../src/gateway/plain-yaml.js';
import { loadConfig } from '../../src/platform/config.js';

type Operation = { security?: Record<string, string[]>[]; 'x-gateway-access'?: string; tags?: string[] };
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

const API_KEY = [{ apiKey: [] }, { apiKeyBearer: [] }];
const TOKEN = [{ accessToken: [] }];
const EXPECTED_SECURITY: Record<RouteAccess, unknown[]> = {
  public: [],
  signedIn: TOKEN,
  tenant: [...API_KEY, ...TOKEN],
  tenantEditor: [...API_KEY, ...TOKEN],
  tenantAdmin: TOKEN,
  platformAdmin: TOKEN,
  personal: TOKEN,
  owner: [...API_KEY, ...TOKEN],
  scim: [{ scimToken: [] }],
};

/**
 * Routes the document is about: not CORS preflights (OPTIONS), not the HEAD Fastify adds
 * to each GET, not methods OpenAPI has no field for (WebDAV's, which a route for all
 * methods answers too), not the docs themselves.
 */
const DOCUMENTED_METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'TRACE']);
function documented(route: RouteSummary): boolean {
  if (!DOCUMENTED_METHODS.has(route.method) || route.hidden) return false;
  return route.url !== '/openapi.json' && route.url !== '/docs' && !route.url.startsWith('/docs/');
}

/** `/api/os/workspaces/:workspaceId` → `/api/os/workspaces/{workspaceId}` (and a wildcard `*` → `{*}`). */
function openapiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{*}');
}

describe('the OpenAPI document and the docs', () => {
  let gw: TestGateway;
  let off: TestGateway | undefined;
  let doc: Document;
  let docText: string;
  let secrets: string[];

  let builds = 0;
  let apiKey: string;

  before(async () => {
    gw = await startGateway();
    // Issue 26: built on the first request, the document held the event loop for 0.7 s
    // (anyone could trigger it). It is built at start: from here on, no request may build it.
    const app = gw.app as unknown as Record<string, (...args: unknown[]) => unknown>;
    const build = app[BUILD_DOCUMENT]!;
    app[BUILD_DOCUMENT] = (...args) => {
      builds++;
      return build(...args);
    };
    const tenant = await seedTenant(gw, 'openapi');
    const key = await createApiKey(gw, tenant.tenantId, 'doc-reader');
    apiKey = key.key;
    const token = await tokenFor(gw, tenant.admin.id, tenant.tenantId);
    secrets = [
      gw.ctx.config.secret!,
      gw.ctx.secrets.internalTokenKey.toString('base64'),
      gw.ctx.secrets.internalTokenKey.toString('base64url'),
      gw.ctx.secrets.internalTokenKey.toString('hex'),
      gw.dataDir,
      key.key,
      tenant.admin.password,
      token,
      ...(gw.ctx.config.databaseUrl ? [gw.ctx.config.databaseUrl] : []),
    ].filter((s): s is string => typeof s === 'string' && s.length > 0);
    const response = await gw.request('GET', '/openapi.json');
    assert.equal(response.status, 200, response.text);
    docText = response.text;
    doc = response.body;
  });
  after(async () => {
    await gw.close();
    await off?.close();
  });

  it('is served without a credential, as JSON, with the correlation id', async () => {
    const response = await gw.request('GET', '/openapi.json');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.ok(response.headers.get('x-correlation-id'));
    assert.equal(response.text, docText, 'the same document every time');
  });

  it('is built once at start: no request for the document, JSON or YAML, GET or HEAD, builds it', async () => {
    const fresh = await startGateway();
    try {
      const app = fresh.app as unknown as Record<string, unknown>;
      app[BUILD_DOCUMENT] = () => assert.fail('a request built the API document');
      for (const [method, path] of [
        ['HEAD', '/docs/yaml'],
        ['GET', '/docs/yaml'],
        ['GET', '/openapi.json'],
        ['HEAD', '/openapi.json'],
        ['GET', '/docs/json'],
      ] as const) {
        const response = await fresh.request(method, path);
        assert.equal(response.status, 200, `${method} ${path}: ${response.text.slice(0, 300)}`);
      }
    } finally {
      await fresh.close();
    }
    assert.equal(builds, 0, 'nor on the gateway the other tests use');
  });

  it('serves the same document as YAML at /docs/yaml', async () => {
    const response = await gw.request('GET', '/docs/yaml');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/x-yaml/);
    assert.deepEqual(parseYaml(response.text), doc);
  });

  it('writes YAML that reads back as the same data, whatever the strings hold', () => {
    const data = {
      plain: 'a sentence with spaces/and_paths-1.2',
      reserved: ['true', 'False', 'null', 'yes', 'No', 'on', 'OFF', 'y', '~', ''],
      numbers: ['1', '1e3', '0x1f', '.inf', '-.5', '12:30'],
      punctuation: ['a: b', 'a #b', '- item', '? key', '[x]', '{y}', '*alias', '&anchor', '!tag', '|', '>', '%', '@', '`', "'", '"'],
      whitespace: [' leading', 'trailing ', 'tab\there', 'line\nbreak', '\r\n'],
      unicode: ['é日本', '\u0085', '\u007f', '\u009f', '\u2028', '\ufeff', '\ud83d\ude00', '\ud800 lone', '\udc00'],
      '': 'empty key',
      '200': 'numeric key',
      'key: with colon': { nested: [[1, 2], [], {}, [{ a: null, b: [true, false] }]], empty: {} },
      values: [0, -1.5, 1e21, null, true, false],
    };
    assert.deepEqual(parseYaml(toPlainYaml(data)), data);
    assert.equal(toPlainYaml([]), '[]\n');
    assert.equal(parseYaml(toPlainYaml('yes')), 'yes');
  });

  it('validates as OpenAPI 3.1', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as never);
    assert.deepEqual(result.errors, undefined, JSON.stringify(result.errors, null, 2)?.slice(0, 4000));
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.1');
  });

  it('lists every route the gateway registered, with the credentials its access level takes', () => {
    const routes = gw.app.routeTable.filter(documented);
    assert.ok(routes.length > 50, `only ${routes.length} routes`);
    const missing: string[] = [];
    const wrong: string[] = [];
    for (const route of routes) {
      const operation = doc.paths[openapiPath(route.url)]?.[route.method.toLowerCase()];
      if (!operation) {
        missing.push(`${route.method} ${route.url}`);
        continue;
      }
      if (operation['x-gateway-access'] !== route.access)
        wrong.push(`${route.method} ${route.url}: x-gateway-access ${operation['x-gateway-access']}`);
      try {
        assert.deepEqual(operation.security, EXPECTED_SECURITY[route.access]);
      } catch {
        wrong.push(`${route.method} ${route.url} (${route.access}): security ${JSON.stringify(operation.security)}`);
      }
    }
    assert.deepEqual(missing, [], `routes missing from the document:\n${missing.join('\n')}`);
    assert.deepEqual(wrong, [], wrong.join('\n'));
    for (const name of ['apiKey', 'apiKeyBearer', 'accessToken']) assert.ok(doc.components.securitySchemes[name], name);
    // The removed endpoint (410 to any method) says so.
    assert.equal((doc.paths['/api/llm/v1/chat/stream']?.post as { deprecated?: boolean } | undefined)?.deprecated, true);
  });

  it('lists nothing the gateway does not answer, and not itself or the docs', () => {
    const registered = new Set(gw.app.routeTable.filter(documented).map((r) => `${r.method.toLowerCase()} ${openapiPath(r.url)}`));
    const extra: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) {
        if (!registered.has(`${method} ${path}`)) extra.push(`${method} ${path}`);
      }
    }
    assert.deepEqual(extra, []);
    assert.equal(doc.paths['/openapi.json'], undefined);
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/docs')));
  });

  it('documents the upload routes as JSON and as multipart/form-data with a file field, and an upload of that form is taken', async () => {
    type Media = { schema: { type?: string; required?: string[]; properties: Record<string, any> } };
    const uploads = ['/api/os/collections/{collectionId}/documents', '/api/os/workspaces/{workspaceId}/documents'];
    for (const path of uploads) {
      const content = (doc.paths[path]?.post as { requestBody?: { content: Record<string, Media> } } | undefined)?.requestBody?.content;
      assert.ok(content, path);
      assert.deepEqual(Object.keys(content).sort(), ['application/json', 'multipart/form-data'], path);
      assert.deepEqual(content['application/json']!.schema.required?.sort(), ['name', 'text'], path);
      const form = content['multipart/form-data']!.schema;
      assert.equal(form.type, 'object', path);
      assert.deepEqual(form.required, ['file'], path);
      assert.equal(form.properties.file.type, 'array', path);
      assert.equal(form.properties.file.items.format, 'binary', path);
      assert.equal(form.properties.metadata.contentMediaType, 'application/json', path);
    }
    // What Swagger UI sends from that form: a file part and a metadata field.
    const workspace = await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'from the docs' } });
    assert.equal(workspace.status, 201, workspace.text);
    const uploaded = await uploadFiles(
      gw,
      `/api/os/workspaces/${workspace.body.id}/documents`,
      { apiKey },
      [{ name: 'notes.txt', content: 'hello' }],
      {
        metadata: '{"source":"swagger-ui"}',
      },
    );
    assert.equal(uploaded.status, 202, uploaded.text);
    assert.equal(uploaded.body.data[0].name, 'notes.txt');
  });

  it("documents the text rules as an extension, not as a keyword a reader's validator must know", () => {
    assert.doesNotMatch(docText, /"text":"(line|multiline|verbatim)"/);
    assert.match(docText, /"x-gateway-text":"line"/);
    assert.match(docText, /"x-gateway-text":"verbatim"/);
  });

  it('carries no secret: no key, token, password, server secret, database address or data directory', () => {
    for (const secret of secrets) assert.ok(!docText.includes(secret), `the document holds a secret (${secret.slice(0, 6)}…)`);
    assert.equal((doc as { servers?: unknown }).servers, undefined, 'no server address');
  });

  it('serves the interactive docs at /docs without a credential', async () => {
    const page = await gw.request('GET', '/docs');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /swagger-ui/i);
    assert.ok(page.headers.get('x-correlation-id'));
    const script = await gw.request('GET', '/docs/static/swagger-ui-bundle.js');
    assert.equal(script.status, 200);
    const json = await gw.request('GET', '/docs/json');
    assert.equal(json.status, 200);
    assert.deepEqual(json.body, doc);
  });

  it('with GATEWAY_API_DOCS=off: /docs is 404, /openapi.json is still served', async () => {
    off = await startGateway({ GATEWAY_API_DOCS: 'off' });
    for (const path of ['/docs', '/docs/', '/docs/json', '/docs/static/swagger-ui-bundle.js']) {
      const response = await off.request('GET', path);
      assert.equal(response.status, 404, path);
    }
    assert.ok(!off.app.routeTable.some((r) => r.url.startsWith('/docs')));
    const response = await off.request('GET', '/openapi.json');
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.body.paths), Object.keys(doc.paths));
  });

  it('GATEWAY_API_DOCS takes on or off (on by default); anything else stops the start naming it', () => {
    assert.equal(loadConfig({}).apiDocs, true);
    assert.equal(loadConfig({ GATEWAY_API_DOCS: 'off' }).apiDocs, false);
    assert.throws(() => loadConfig({ GATEWAY_API_DOCS: 'yes' }), /Invalid configuration: GATEWAY_API_DOCS/);
  });

  it('adds no hook to the routes it documents: the chat route runs the same hooks with the docs on and off', () => {
    const hooksOf = (app: TestGateway['app']) =>
      app
        .printRoutes({ commonPrefix: false, includeHooks: true, method: 'POST' })
        .split('\n')
        .filter((line) => !line.includes('docs'))
        .join('\n');
    assert.ok(off, 'the docs-off gateway of the previous test');
    const on = hooksOf(gw.app);
    assert.match(on, /\/completions \(POST\)/);
    assert.equal(on, hooksOf(off.app));
    assert.doesNotMatch(on, /swagger/i);
  });
});
