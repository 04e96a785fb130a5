import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startGateway, freshDatabase, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { TEST_TMP } from '../helpers/paths.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { migrate, MIGRATIONS_DIR } from '../../src/platform/db/migrate.js';
import { isId, newId } from '../../src/platform/ids.js';
import { validation } from '../../src/platform/errors.js';
import { replaceDocumentChunks } from '../../src/areas/os/chunks/store.js';
import { BUILT_IN_EMBEDDER } from '../../src/areas/os/collections/embedding.js';

describe('os collections', () => {
  let gw: TestGateway;
  let world: World;
  let adminA: string;
  let memberA: string;
  let keyA: string;
  let adminB: string;
  const checked: string[] = [];

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'collections');
    adminA = world.a.admin.token;
    memberA = world.a.member.token;
    keyA = world.a.key.key;
    adminB = world.b.admin.token;
    // The llm area's check, as the composition root would hand it: one model a node serves.
    gw.ctx.checkEmbeddingModel = async (tenantId, model) => {
      checked.push(`${tenantId}:${model}`);
      if (model === 'nomic-embed-text') return { dimensions: 768 };
      throw validation('embeddingModel', `no node serves ${model}`);
    };
  });
  after(() => gw.close());

  const workspace = async (name = 'Handbooks') => {
    const created = await gw.request('POST', '/api/os/workspaces', { apiKey: keyA, json: { name } });
    assert.equal(created.status, 201, created.text);
    return created.body.id as string;
  };
  const collection = async (workspaceId: string, json: Record<string, unknown> = { name: 'Manuals' }) => {
    const created = await gw.request('POST', `/api/os/workspaces/${workspaceId}/collections`, { token: adminA, json });
    assert.equal(created.status, 201, created.text);
    return created.body;
  };
  const defaultEmbedding = () => (gw.ctx.vector ? { ...BUILT_IN_EMBEDDER } : null);

  it('gives every new workspace exactly one default collection, created with it', async () => {
    const ws = await workspace();
    const list = await gw.request('GET', `/api/os/workspaces/${ws}/collections`, { token: memberA });
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    const [only] = list.body.data;
    assert.ok(isId('collection', only.id));
    assert.equal(only.isDefault, true);
    assert.equal(only.workspaceId, ws);
    assert.equal(only.language, 'english');
    assert.deepEqual(only.embedding, defaultEmbedding());
    assert.equal(only.pendingEmbeddingModel, null);
    assert.equal(only.documentCount, 0);
    assert.equal(only.chunkCount, 0);
    const rows = await gw.ctx.db.query('SELECT id FROM collections WHERE workspace_id = $1 AND is_default', [ws]);
    assert.equal(rows.length, 1);
  });

  it('creates, lists, gets, updates and deletes collections within the tenant', async () => {
    const ws = await workspace();
    const created = await collection(ws, { name: 'Price lists', description: 'current prices', language: 'simple' });
    assert.match(created.id, /^col_/);
    assert.equal(created.name, 'Price lists');
    assert.equal(created.description, 'current prices');
    assert.equal(created.language, 'simple');
    assert.equal(created.isDefault, false);
    assert.deepEqual(created.embedding, defaultEmbedding());

    const list = await gw.request('GET', `/api/os/workspaces/${ws}/collections`, { apiKey: keyA });
    assert.deepEqual(
      list.body.data.map((c: { name: string }) => c.name),
      ['Default', 'Price lists'],
    );
    const read = await gw.request('GET', `/api/os/collections/${created.id}`, { token: memberA });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created);

    const patched = await gw.request('PATCH', `/api/os/collections/${created.id}`, {
      apiKey: keyA,
      json: { name: 'Prices', description: null, language: 'english' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.name, 'Prices');
    assert.equal(patched.body.description, null);
    assert.equal(patched.body.language, 'english');

    assert.equal((await gw.request('DELETE', `/api/os/collections/${created.id}`, { token: adminA })).status, 204);
    assert.equal((await gw.request('GET', `/api/os/collections/${created.id}`, { token: adminA })).status, 404);
    assert.equal((await gw.request('DELETE', `/api/os/collections/${created.id}`, { token: adminA })).status, 404);
  });

  it('records the embedder asked for: lexical only (null), a node model checked by the llm area, unknown ones refused', async () => {
    const ws = await workspace();
    const lexical = await collection(ws, { name: 'Lexical', embeddingModel: null });
    assert.equal(lexical.embedding, null);
    if (!gw.ctx.vector) return;
    const node = await collection(ws, { name: 'Nomic', embeddingModel: 'nomic-embed-text' });
    assert.deepEqual(node.embedding, { model: 'nomic-embed-text', dimensions: 768 });
    assert.ok(checked.includes(`${world.a.tenantId}:nomic-embed-text`), 'asked with the caller’s tenant');
    const builtIn = await collection(ws, { name: 'Words', embeddingModel: BUILT_IN_EMBEDDER.model });
    assert.deepEqual(builtIn.embedding, { ...BUILT_IN_EMBEDDER });
    const unknown = await gw.request('POST', `/api/os/workspaces/${ws}/collections`, {
      token: adminA,
      json: { name: 'x', embeddingModel: 'no-such-model' },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].field, 'embeddingModel');
  });

  it('answers 503 VECTOR_UNAVAILABLE for an embedder without pgvector, and goes lexical by default there', async () => {
    const ws = await workspace();
    const vector = gw.ctx.vector;
    gw.ctx.vector = false;
    try {
      const asked = await gw.request('POST', `/api/os/workspaces/${ws}/collections`, {
        token: adminA,
        json: { name: 'x', embeddingModel: 'nomic-embed-text' },
      });
      assert.equal(asked.status, 503);
      assert.equal(asked.body.code, 'VECTOR_UNAVAILABLE');
      const omitted = await collection(ws, { name: 'Plain' });
      assert.equal(omitted.embedding, null);
      const patch = await gw.request('PATCH', `/api/os/collections/${omitted.id}`, {
        token: adminA,
        json: { embeddingModel: BUILT_IN_EMBEDDER.model },
      });
      assert.equal(patch.status, 503);
      const fresh = await workspace('Without pgvector');
      const defaults = await gw.request('GET', `/api/os/workspaces/${fresh}/collections`, { token: adminA });
      assert.equal(defaults.body.data[0].embedding, null);
    } finally {
      gw.ctx.vector = vector;
    }
  });

  it('refuses a language the database has no text-search configuration for, listing valid ones', async () => {
    const ws = await workspace();
    const bad = await gw.request('POST', `/api/os/workspaces/${ws}/collections`, {
      token: adminA,
      json: { name: 'x', language: 'klingon' },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].field, 'language');
    assert.match(bad.body.detail, /english/);
    assert.match(bad.body.detail, /simple/);
    const existing = await collection(ws);
    const badPatch = await gw.request('PATCH', `/api/os/collections/${existing.id}`, { token: adminA, json: { language: 'klingon' } });
    assert.equal(badPatch.status, 400);
    assert.equal(badPatch.body.errors[0].field, 'language');
  });

  it('changes language and embedder at once while empty; with chunks the language is 409 and the embedder goes pending', async () => {
    const ws = await workspace();
    const empty = await collection(ws, { name: 'Empty', embeddingModel: null });
    if (gw.ctx.vector) {
      const swapped = await gw.request('PATCH', `/api/os/collections/${empty.id}`, {
        token: adminA,
        json: { embeddingModel: 'nomic-embed-text' },
      });
      assert.equal(swapped.status, 200, swapped.text);
      assert.deepEqual(swapped.body.embedding, { model: 'nomic-embed-text', dimensions: 768 });
      assert.equal(swapped.body.pendingEmbeddingModel, null);
    }
    const language = await gw.request('PATCH', `/api/os/collections/${empty.id}`, { token: adminA, json: { language: 'german' } });
    assert.equal(language.status, 200);
    assert.equal(language.body.language, 'german');

    const full = await collection(ws, { name: 'Full' });
    const doc = await gw.request('POST', `/api/os/collections/${full.id}/documents`, {
      apiKey: keyA,
      json: { name: 'note.txt', text: 'The warranty lasts two years.' },
    });
    assert.equal(doc.status, 202, doc.text);
    await gw.ctx.db.tx((q) =>
      replaceDocumentChunks(q, { tenantId: world.a.tenantId, collectionId: full.id, documentId: doc.body.id, language: 'english' }, [
        { content: 'The warranty lasts two years.', title: 'note.txt', headingPath: [], page: null, tokenCount: 7 },
      ]),
    );
    const refused = await gw.request('PATCH', `/api/os/collections/${full.id}`, { token: adminA, json: { language: 'simple' } });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.code, 'CONFLICT');
    const same = await gw.request('PATCH', `/api/os/collections/${full.id}`, {
      token: adminA,
      json: { language: 'english', name: 'Still full' },
    });
    assert.equal(same.status, 200, 'the language it already has is no change');
    if (gw.ctx.vector) {
      const pending = await gw.request('PATCH', `/api/os/collections/${full.id}`, {
        token: adminA,
        json: { embeddingModel: 'nomic-embed-text' },
      });
      assert.equal(pending.status, 200, pending.text);
      assert.deepEqual(pending.body.embedding, { ...BUILT_IN_EMBEDDER }, 'retrieval keeps the old vectors until the swap');
      assert.equal(pending.body.pendingEmbeddingModel, 'nomic-embed-text');
      const back = await gw.request('PATCH', `/api/os/collections/${full.id}`, {
        token: adminA,
        json: { embeddingModel: BUILT_IN_EMBEDDER.model },
      });
      assert.equal(back.body.pendingEmbeddingModel, null, 'asking for the current embedder again cancels the change');
    }
    const lexical = await gw.request('PATCH', `/api/os/collections/${full.id}`, { token: adminA, json: { embeddingModel: null } });
    assert.equal(lexical.status, 200);
    assert.equal(lexical.body.embedding, null, 'lexical only needs no re-embedding: at once');
    assert.equal(lexical.body.chunkCount, 1);
    assert.equal(lexical.body.documentCount, 1);
  });

  it("keeps a workspace's default collection until the workspace goes", async () => {
    const ws = await workspace();
    const [only] = (await gw.request('GET', `/api/os/workspaces/${ws}/collections`, { token: adminA })).body.data;
    const refused = await gw.request('DELETE', `/api/os/collections/${only.id}`, { token: adminA });
    assert.equal(refused.status, 409);
    assert.equal((await gw.request('GET', `/api/os/collections/${only.id}`, { token: adminA })).status, 200);
    assert.equal((await gw.request('DELETE', `/api/os/workspaces/${ws}`, { token: adminA })).status, 204);
    assert.equal((await gw.request('GET', `/api/os/collections/${only.id}`, { token: adminA })).status, 404);
  });

  it("never shows or changes another tenant's workspace or collection", async () => {
    const ws = await workspace('Secret');
    const mine = await collection(ws, { name: 'Secret collection' });
    const asB = [{ token: adminB }, { apiKey: world.b.key.key }];
    for (const credential of asB) {
      for (const [method, url, json] of [
        ['GET', `/api/os/workspaces/${ws}/collections`],
        ['POST', `/api/os/workspaces/${ws}/collections`, { name: 'pwned' }],
        ['GET', `/api/os/collections/${mine.id}`],
        ['PATCH', `/api/os/collections/${mine.id}`, { name: 'pwned' }],
        ['DELETE', `/api/os/collections/${mine.id}`],
      ] as const) {
        const response = await gw.request(method, url, { ...credential, ...(json ? { json } : {}) });
        assert.equal(response.status, 404, `${method} ${url} by tenant B`);
      }
    }
    const still = await gw.request('GET', `/api/os/collections/${mine.id}`, { token: adminA });
    assert.equal(still.body.name, 'Secret collection');
    const count = await gw.ctx.db.query('SELECT count(*)::int AS n FROM collections WHERE workspace_id = $1', [ws]);
    assert.deepEqual(count, [{ n: 2 }]);
  });

  it('needs a credential, and the admin role or a key to change things', async () => {
    const ws = await workspace();
    const mine = await collection(ws);
    for (const [method, url] of [
      ['GET', `/api/os/workspaces/${ws}/collections`],
      ['POST', `/api/os/workspaces/${ws}/collections`],
      ['GET', `/api/os/collections/${mine.id}`],
      ['PATCH', `/api/os/collections/${mine.id}`],
      ['DELETE', `/api/os/collections/${mine.id}`],
    ] as const) {
      const none = await gw.request(method, url, method === 'POST' || method === 'PATCH' ? { json: { name: 'x' } } : {});
      assert.equal(none.status, 401, `${method} ${url} without a credential`);
    }
    for (const [method, url, json] of [
      ['POST', `/api/os/workspaces/${ws}/collections`, { name: 'x' }],
      ['PATCH', `/api/os/collections/${mine.id}`, { name: 'x' }],
      ['DELETE', `/api/os/collections/${mine.id}`],
    ] as const) {
      const member = await gw.request(method, url, { token: memberA, ...(json ? { json } : {}) });
      assert.equal(member.status, 403, `${method} ${url} by a member`);
    }
    assert.equal((await gw.request('GET', `/api/os/collections/${mine.id}`, { token: memberA })).status, 200);
  });

  it('rejects malformed ids with 404 and malformed bodies with 400 naming the field', async () => {
    const ws = await workspace();
    for (const url of ['/api/os/collections/not-an-id', `/api/os/collections/${newId('collection')}`, `/api/os/collections/${ws}`]) {
      assert.equal((await gw.request('GET', url, { token: adminA })).status, 404, url);
      assert.equal((await gw.request('PATCH', url, { token: adminA, json: { name: 'x' } })).status, 404, url);
      assert.equal((await gw.request('DELETE', url, { token: adminA })).status, 404, url);
    }
    assert.equal((await gw.request('GET', '/api/os/workspaces/ws_nope/collections', { token: adminA })).status, 404);
    assert.equal((await gw.request('POST', '/api/os/workspaces/ws_nope/collections', { token: adminA, json: { name: 'x' } })).status, 404);
    for (const [json, field] of [
      [{}, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x', description: 7 }, 'description'],
      [{ name: 'x', embeddingModel: '' }, 'embeddingModel'],
      [{ name: 'x', language: 'english; DROP TABLE collections' }, 'language'],
    ] as const) {
      const response = await gw.request('POST', `/api/os/workspaces/${ws}/collections`, { token: adminA, json });
      assert.equal(response.status, 400, JSON.stringify(json));
      assert.equal(response.body.errors[0].field, field, JSON.stringify(json));
    }
  });
});

describe('migration 0005: collections for workspaces that already exist', () => {
  let dataDir: string;
  let migrations: string;

  before(() => {
    dataDir = mkdtempSync(path.join(TEST_TMP, 'backfill-'));
    migrations = path.join(dataDir, 'before-0005');
    mkdirSync(migrations);
    for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0005'))
      cpSync(new URL(file, MIGRATIONS_DIR), path.join(migrations, file));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('gives each existing workspace one default collection, with an id of the usual shape', async () => {
    const server = process.env.TEST_DATABASE_URL ? await emptyServerDatabase(dataDir) : undefined;
    const db = await openDatabase({ dataDir: path.join(dataDir, 'db'), ...(server ? { databaseUrl: server.url } : {}) });
    try {
      await migrate(db, () => {}, pathToFileURL(migrations + path.sep));
      await db.query("INSERT INTO tenants (id, name) VALUES ('ten_A', 'A'), ('ten_B', 'B')");
      await db.query(
        "INSERT INTO workspaces (id, tenant_id, name) VALUES ('ws_1', 'ten_A', 'one'), ('ws_2', 'ten_A', 'two'), ('ws_3', 'ten_B', 'three')",
      );
      const result = await migrate(db);
      assert.ok(result.applied.includes('0005_documents'));
      const rows = await db.query<{ id: string; tenant_id: string; workspace_id: string; is_default: boolean; name: string }>(
        'SELECT id, tenant_id, workspace_id, is_default, name FROM collections ORDER BY workspace_id',
      );
      assert.deepEqual(
        rows.map((r) => [r.workspace_id, r.tenant_id, r.is_default, r.name]),
        [
          ['ws_1', 'ten_A', true, 'Default'],
          ['ws_2', 'ten_A', true, 'Default'],
          ['ws_3', 'ten_B', true, 'Default'],
        ],
      );
      for (const row of rows) assert.ok(isId('collection', row.id), row.id);
      assert.equal(new Set(rows.map((r) => r.id)).size, 3);
    } finally {
      await db.close();
      await server?.drop();
    }
  });
});

// An empty database on the test server (a clone of the migrated template would already have 0005).
async function emptyServerDatabase(dataDir: string) {
  const { url, drop } = await freshDatabase(dataDir);
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
  await client.end();
  return { url: url!, drop };
}
