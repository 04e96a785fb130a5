// Retrieval: BM25 over the full-text index, the vector leg, fusion and the
// per-query answerability decision, scopes resolved within the tenant, statuses, and POST /api/os/search.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { retrieve, EmbedderUnavailableError, type RetrievalRequest } from '../../src/areas/os/retrieval/search.js';
import { anyOf, lexicalCandidates, tfOfRank } from '../../src/areas/os/retrieval/lexical.js';
import { ANSWERABILITY } from '../../src/areas/os/retrieval/answerability.js';
import { reorder } from '../../src/areas/os/retrieval/alignment-rank.js';
import { FUSION } from '../../src/areas/os/retrieval/fusion.js';
import { spreadHead } from '../../src/areas/os/retrieval/diversity.js';
import { removeDocumentChunks } from '../../src/areas/os/chunks/store.js';
import { resolveScopes } from '../../src/areas/os/retrieval/scopes.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import { AppError } from '../../src/platform/errors.js';
import { addDocument, createCollection, createWorkspace, depsOf, testEmbed, type TestCollection } from './retrieval-support.js';

const FILLER = [
  'Invoices are sent on the first working day of each month.',
  'Every invoice lists the order number and the delivery address.',
  'An invoice can be paid by bank transfer or by card.',
  'Questions about an invoice go to the accounts team.',
  'A corrected invoice replaces the original one.',
  'The office is open from nine to five on weekdays.',
  'Visitors sign in at the front desk and wear a badge.',
  'Our products ship to customers around the world.',
];

describe('os retrieval', () => {
  let gw: TestGateway;
  let world: World;
  let tenantA: string;
  let workspace: string;
  let handbook: TestCollection;
  let search: (request: Omit<RetrievalRequest, 'collectionIds'> & { collectionIds?: string[] }) => ReturnType<typeof retrieve>;

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'retrieval');
    tenantA = world.a.tenantId;
    workspace = await createWorkspace(gw, tenantA);
    handbook = await createCollection(gw, tenantA, workspace, { name: 'Handbook' });
    await addDocument(gw, handbook, 'Billing guide', FILLER);
    await addDocument(gw, handbook, 'Late payments', [
      'An invoice paid after thirty days incurs a late penalty of two percent.',
      'Reminders are sent seven days before an invoice is due.',
    ]);
    await addDocument(gw, handbook, 'Benefits', [
      { content: 'Staff receive twenty-five days of paid holiday each year.', headingPath: ['Time off'] },
      { content: 'The pension scheme matches contributions up to five percent.', headingPath: ['Pension'] },
    ]);
    search = (request) => retrieve(depsOf(gw), tenantA, { collectionIds: [handbook.id], ...request });
  });
  after(() => gw.close());

  it('ranks by BM25: the passage with the rarer query term first, real corpus statistics behind it', async () => {
    const result = await search({ query: 'invoice penalty', mode: 'lexical' });
    assert.equal(result.status, 'active');
    assert.equal(result.retrieval.mode, 'lexical');
    assert.match(result.snippets[0]!.content, /late penalty/);
    assert.equal(result.snippets[0]!.documentName, 'Late payments');
    // Ranked, not filtered: the passages holding only the common "invoice" follow it.
    assert.ok(
      result.snippets.slice(1).every((s) => /invoice/i.test(s.content) && !/penalty/.test(s.content)),
      JSON.stringify(result.snippets.map((s) => s.content)),
    );
    const [df] = await gw.ctx.db.query<{ df: number }>(`SELECT df FROM collection_terms WHERE collection_id = $1 AND term = 'invoic'`, [
      handbook.id,
    ]);
    assert.equal(df!.df, 7);
    const [stats] = await gw.ctx.db.query<{ chunk_count: number; total_length: number }>(
      'SELECT chunk_count, total_length FROM collections WHERE id = $1',
      [handbook.id],
    );
    assert.equal(stats!.chunk_count, 12);
    const [sum] = await gw.ctx.db.query<{ n: number }>('SELECT sum(length)::int AS n FROM chunks WHERE collection_id = $1', [handbook.id]);
    assert.equal(stats!.total_length, sum!.n);
  });

  it('reads term frequencies through ts_rank exactly as unnest(tsv) counts the positions', async () => {
    const ws = await createWorkspace(gw, tenantA);
    const c = await createCollection(gw, tenantA, ws, { embedder: null, language: 'simple' });
    const counts = [1, 2, 3, 5, 8, 13, 40, 100, 255];
    await addDocument(
      gw,
      c,
      'Counts',
      counts.map((n, i) => ({ content: `${'alpha '.repeat(n)} beta gamma`, headingPath: i % 2 ? ['alpha alpha beta'] : [] })),
    );
    const rows = await gw.ctx.db.query<{ positions: number; titled: number; tf: number; tf_title: number }>(
      `SELECT cardinality(u.positions) AS positions, cardinality(array_positions(u.weights, 'A')) AS titled,
              ${tfOfRank("ts_rank('{1,1,1,1}', c.tsv, $2::tsquery)")}::int AS tf, ${tfOfRank("ts_rank('{0,0,0,1}', c.tsv, $2::tsquery)")}::int AS tf_title
       FROM chunks c, unnest(c.tsv) u WHERE c.collection_id = $1 AND u.lexeme = 'alpha'`,
      [c.id, anyOf(['alpha'])],
    );
    assert.equal(rows.length, counts.length);
    for (const row of rows) {
      // Exact as far as float4 allows: to ~100 positions; within one beyond.
      assert.ok(Math.abs(row.tf - row.positions) <= (row.positions > 100 ? 1 : 0), JSON.stringify(row));
      assert.equal(row.tf_title, row.titled, JSON.stringify(row));
    }
  });

  it('boosts a match in the title or heading path over the same word in the text', async () => {
    const ws = await createWorkspace(gw, tenantA);
    const c = await createCollection(gw, tenantA, ws, { embedder: null });
    await addDocument(gw, c, 'Support', [
      { content: 'When a ticket stays open for two days, escalation to the duty manager follows.', headingPath: ['Tickets'] },
      { content: 'Tickets open for two days go to the duty manager, who decides what follows.', headingPath: ['Escalation'] },
      'Unrelated text about parking spaces and bicycles.',
    ]);
    const result = await retrieve(depsOf(gw), tenantA, { query: 'escalation', workspaceIds: [ws] });
    assert.deepEqual(
      result.snippets.map((s) => s.source.headingPath),
      [['Escalation'], ['Tickets']],
    );
    assert.equal(result.snippets[0]!.source.title, 'Support');
  });

  it("uses the collection's language: english stems and drops stop words, simple matches words as written", async () => {
    const ws = await createWorkspace(gw, tenantA);
    const english = await createCollection(gw, tenantA, ws, { embedder: null, language: 'english' });
    const simple = await createCollection(gw, tenantA, ws, { embedder: null, language: 'simple' });
    const text = 'The backup servers are running every night.';
    await addDocument(gw, english, 'English', [text, 'Nothing else here.']);
    await addDocument(gw, simple, 'Simple', [text, 'Nothing else here.']);
    const found = async (query: string, collection: TestCollection) =>
      (await retrieve(depsOf(gw), tenantA, { query, collectionIds: [collection.id] })).snippets.length;
    assert.equal(await found('run', english), 1);
    assert.equal(await found('run', simple), 0);
    assert.equal(await found('running', simple), 1);
    assert.equal(await found('the', english), 0, 'a stop word alone is no query in english');
    // Both languages searched together, each with its own lexemes and statistics.
    const both = await retrieve(depsOf(gw), tenantA, { query: 'servers running', workspaceIds: [ws] });
    assert.deepEqual(both.snippets.map((s) => s.documentName).sort(), ['English', 'Simple']);
  });

  it('returns nothing, with no_matches, for a question the documents cannot answer', async () => {
    const query = 'Who won the 1998 football world cup?';
    // The lexical leg does see a candidate ("world"), but it carries a small share of the question.
    const candidates = await lexicalCandidates(gw.ctx.db, {
      tenantId: tenantA,
      collections: (await resolveScopes(gw.ctx.db, tenantA, { collectionIds: [handbook.id] }))[0]!.collections,
      documentIds: null,
      query,
    });
    assert.ok(candidates.length >= 1);
    assert.ok(candidates.every((c) => c.relevance < ANSWERABILITY.coverage));
    for (const mode of ['hybrid', 'lexical', 'vector'] as const) {
      const result = await search({ query, mode });
      assert.deepEqual(result.snippets, [], mode);
      assert.equal(result.status, 'no_matches', mode);
    }
  });

  it('finds a paraphrase in hybrid mode that the lexical leg misses', async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector on this database');
    const query = 'How much vacation do employees get annually?';
    const lexical = await search({ query, mode: 'lexical' });
    assert.ok(!lexical.snippets.some((s) => /holiday/.test(s.content)));
    const hybrid = await search({ query });
    assert.equal(hybrid.retrieval.mode, 'hybrid');
    assert.equal(hybrid.retrieval.embedder, 'test-hash-100');
    assert.match(hybrid.snippets[0]!.content, /paid holiday/);
    assert.deepEqual(hybrid.snippets[0]!.source, { title: 'Benefits', headingPath: ['Time off'] });
    assert.ok(hybrid.snippets[0]!.score > 0.5 && hybrid.snippets[0]!.score <= 1);
    const vector = await search({ query, mode: 'vector' });
    assert.equal(vector.retrieval.mode, 'vector');
    assert.match(vector.snippets[0]!.content, /paid holiday/);
  });

  it('embeds the query once per embedder, and falls back to lexical when it cannot', async () => {
    let calls = 0;
    const down = async () => {
      calls++;
      throw new EmbedderUnavailableError('node down');
    };
    const deps = depsOf(gw, down);
    const found = await retrieve(deps, tenantA, { query: 'late penalty invoice', collectionIds: [handbook.id], workspaceIds: [workspace] });
    assert.equal(found.retrieval.mode, 'lexical');
    assert.equal(found.retrieval.embedder, null);
    assert.equal(found.status, 'active');
    assert.equal(calls, gw.ctx.vector ? 1 : 0);
    const none = await retrieve(deps, tenantA, { query: 'How much vacation do employees get annually?', collectionIds: [handbook.id] });
    assert.deepEqual(none.snippets, []);
    assert.equal(none.status, gw.ctx.vector ? 'embedder_unavailable' : 'no_matches');
    // No pgvector: lexical, and the answer says so, whatever was asked for.
    const noVector = await retrieve({ ...depsOf(gw), vector: false }, tenantA, {
      query: 'late penalty',
      collectionIds: [handbook.id],
      mode: 'vector',
    });
    assert.equal(noVector.retrieval.mode, 'lexical');
    assert.equal(noVector.status, 'active');
  });

  it('resolves workspaceIds to all their collections, and every id within the tenant only', async () => {
    const ws = await createWorkspace(gw, tenantA);
    const one = await createCollection(gw, tenantA, ws);
    const two = await createCollection(gw, tenantA, ws);
    await addDocument(gw, one, 'One', ['Quarterly revenue grew by twelve percent.', 'filler text one']);
    await addDocument(gw, two, 'Two', ['Quarterly revenue targets are set in January.', 'filler text two']);
    const result = await retrieve(depsOf(gw), tenantA, { query: 'quarterly revenue', workspaceIds: [ws] });
    assert.deepEqual(
      result.snippets
        .slice(0, 2)
        .map((s) => s.documentName)
        .sort(),
      ['One', 'Two'],
    );
    assert.ok(result.snippets.every((s) => s.workspaceId === ws));

    const wsB = await createWorkspace(gw, world.b.tenantId);
    const colB = await createCollection(gw, world.b.tenantId, wsB);
    const docB = await addDocument(gw, colB, 'B secret', ['Quarterly revenue of tenant B.']);
    const cases: [RetrievalRequest, string][] = [
      [{ query: 'revenue', workspaceIds: [ws, wsB] }, 'Workspace not found.'],
      [{ query: 'revenue', collectionIds: [colB.id] }, 'Collection not found.'],
      [{ query: 'revenue', ragScopes: [{ documentIds: [docB.id] }] }, 'Document not found.'],
      [{ query: 'revenue', ragScopes: [{ workspaceId: wsB }] }, 'Workspace not found.'],
      [{ query: 'revenue', ragScopes: [{ workspaceId: ws, collectionIds: [colB.id] }] }, 'Collection not found.'],
      [{ query: 'revenue', collectionIds: ['col_not-an-id'] }, 'Collection not found.'],
      // A collection of the tenant, but not in the scope's workspace.
      [{ query: 'revenue', ragScopes: [{ workspaceId: ws, collectionIds: [handbook.id] }] }, 'Collection not found.'],
    ];
    for (const [request, detail] of cases) {
      await assert.rejects(
        retrieve(depsOf(gw), tenantA, request),
        (error: unknown) => error instanceof AppError && error.code === 'NOT_FOUND' && error.detail === detail,
        JSON.stringify(request),
      );
    }
    // Tenant B, with its own ids, sees only its own passage.
    const asB = await retrieve(depsOf(gw), world.b.tenantId, { query: 'quarterly revenue', workspaceIds: [wsB] });
    assert.deepEqual(new Set(asB.snippets.map((s) => s.documentName)), new Set(['B secret']));
  });

  it('scopes to documents, with per-scope topK and minScore', async () => {
    const ws = await createWorkspace(gw, tenantA);
    const c = await createCollection(gw, tenantA, ws);
    const first = await addDocument(gw, c, 'First', ['Parking permits are issued by facilities.', 'Parking is free after six.']);
    const second = await addDocument(gw, c, 'Second', ['Parking spaces for bicycles are in the basement.', 'More filler.']);
    const onlySecond = await retrieve(depsOf(gw), tenantA, { query: 'parking', ragScopes: [{ documentIds: [second.id] }] });
    assert.deepEqual(new Set(onlySecond.snippets.map((s) => s.documentId)), new Set([second.id]));
    assert.match(onlySecond.snippets[0]!.content, /Parking spaces/);
    const topOne = await retrieve(depsOf(gw), tenantA, { query: 'parking', ragScopes: [{ collectionIds: [c.id], topK: 1 }] });
    assert.equal(topOne.snippets.length, 1);
    const all = await retrieve(depsOf(gw), tenantA, { query: 'parking', ragScopes: [{ workspaceId: ws }] });
    // The three passages that say "parking", then (with vectors) the fourth by meaning.
    assert.equal(all.snippets.length, gw.ctx.vector ? 4 : 3);
    assert.ok(all.snippets.slice(0, 3).every((s) => /parking/i.test(s.content)));
    const strict = await retrieve(depsOf(gw), tenantA, { query: 'parking', ragScopes: [{ workspaceId: ws, minScore: 1 }] });
    assert.ok(strict.snippets.every((s) => s.score === 1));
    // Two scopes: each contributes its own, the documents of one do not leak into the other's limit.
    const two = await retrieve(depsOf(gw), tenantA, {
      query: 'parking',
      ragScopes: [
        { documentIds: [first.id], topK: 1 },
        { documentIds: [second.id], topK: 1 },
      ],
    });
    assert.deepEqual(two.snippets.map((s) => s.documentId).sort(), [first.id, second.id].sort());
    await assert.rejects(
      retrieve(depsOf(gw), tenantA, { query: 'parking', ragScopes: [{ topK: 3 }] }),
      (error: unknown) => error instanceof AppError && error.code === 'VALIDATION_FAILED',
    );
  });

  it('aligns passages word by word on the built-in vectors, and re-orders the fused head by it', async (t) => {
    if (!gw.ctx.vector) return t.skip('the built-in word vectors are loaded only with pgvector');
    const [same, reworded, unrelated] = (await gw.ctx.os.embedders.align('how much vacation do employees get', [
      'How much vacation do employees get?',
      'Staff receive twenty-five days of paid holiday each year.',
      'Invoices are sent on the first working day of each month.',
    ]))!;
    assert.ok(Math.abs(same! - 1) < 1e-6, `the same words align fully: ${same}`);
    assert.ok(reworded! > unrelated!, `holiday for vacation: ${reworded} against ${unrelated}`);

    const head = [{ chunkId: 'a' }, { chunkId: 'b' }, { chunkId: 'c' }];
    const { hits, best } = reorder(
      head,
      new Map([
        ['a', 0.2],
        ['b', 0.9],
        ['c', 0.5],
      ]),
      FUSION.k,
    );
    assert.deepEqual(
      hits.map((h) => h.chunkId),
      ['b', 'a', 'c'],
      'fused 2nd but aligned 1st leads; fused 1st keeps 2nd',
    );
    assert.equal(best, 0.9);
  });

  it('spreads the first places over documents, the passages moved down following right after', () => {
    const documentOf = (id: string) => id[0];
    const ids = (hits: { chunkId: string }[]) => hits.map((h) => h.chunkId);
    const ranked = ['a1', 'a2', 'a3', 'b1', 'a4', 'c1', 'b2'].map((chunkId) => ({ chunkId }));
    assert.deepEqual(ids(spreadHead(ranked, documentOf, 5, 1)), ['a1', 'b1', 'c1', 'a2', 'a3', 'a4', 'b2']);
    assert.deepEqual(ids(spreadHead(ranked, documentOf, 5, 2)), ['a1', 'a2', 'b1', 'c1', 'b2', 'a3', 'a4']);
    const oneDocument = ['a1', 'a2', 'a3'].map((chunkId) => ({ chunkId }));
    assert.deepEqual(ids(spreadHead(oneDocument, documentOf)), ['a1', 'a2', 'a3'], "one document's ranking stands");
  });

  it('drops a deleted document from results at once, and takes its statistics back out', async () => {
    const ws = await createWorkspace(gw, tenantA);
    const c = await createCollection(gw, tenantA, ws);
    await addDocument(gw, c, 'Keep', ['The canteen serves lunch from noon.', 'The canteen closes at three.']);
    const snapshot = async () => ({
      terms: await gw.ctx.db.query('SELECT term, df FROM collection_terms WHERE collection_id = $1 ORDER BY term', [c.id]),
      totals: await gw.ctx.db.query('SELECT chunk_count, total_length FROM collections WHERE id = $1', [c.id]),
      vectors: await gw.ctx.db.query<{ n: number }>(
        gw.ctx.vector
          ? 'SELECT count(*)::int AS n FROM chunk_vectors WHERE collection_id = $1'
          : 'SELECT 0 AS n WHERE $1::text IS NOT NULL',
        [c.id],
      ),
    });
    const before = await snapshot();
    const doc = await addDocument(gw, c, 'Goes', ['The canteen menu changes every Monday; vegan dishes daily.', 'Zebra crossings.']);
    const found = await retrieve(depsOf(gw), tenantA, { query: 'canteen menu vegan', workspaceIds: [ws] });
    assert.equal(found.snippets[0]!.documentId, doc.id);
    await gw.ctx.db.tx((q) => removeDocumentChunks(q, tenantA, c.id, doc.id));
    const after = await retrieve(depsOf(gw), tenantA, { query: 'canteen menu vegan', workspaceIds: [ws] });
    assert.ok(after.snippets.every((s) => s.documentId !== doc.id));
    assert.deepEqual(await snapshot(), before);
    // Writing a document's chunks again replaces them, statistics included.
    const again = await addDocument(gw, c, 'Twice', ['Zebra crossings again.']);
    const stats = await snapshot();
    await gw.ctx.db.tx((q) =>
      import('../../src/areas/os/chunks/store.js').then(({ replaceDocumentChunks }) =>
        replaceDocumentChunks(q, { tenantId: tenantA, collectionId: c.id, documentId: again.id, language: 'english' }, [
          { content: 'Zebra crossings again.', title: 'Twice', headingPath: [], page: null, tokenCount: 3 },
        ]),
      ),
    );
    assert.deepEqual((await snapshot()).terms, stats.terms);
    assert.deepEqual((await snapshot()).totals, stats.totals);
  });

  it('says why there is nothing: no documents, indexing, no matches', async () => {
    const ws = await createWorkspace(gw, tenantA);
    const empty = await createCollection(gw, tenantA, ws);
    assert.equal((await retrieve(depsOf(gw), tenantA, { query: 'anything', collectionIds: [empty.id] })).status, 'no_documents');
    await addDocument(gw, empty, 'Pending', [], { status: 'queued' });
    assert.equal((await retrieve(depsOf(gw), tenantA, { query: 'anything', collectionIds: [empty.id] })).status, 'indexing');
    assert.equal((await search({ query: 'submarine telescope' })).status, 'no_matches');
  });

  it('copes with any query text: quotes, backslashes, tsquery operators, only stop words', async () => {
    for (const query of ["it's O'Reilly's \\ back\\slash", "' | & ! :* ( )", 'the of and', '日本語のテキスト', 'x'.repeat(4000)]) {
      const result = await search({ query });
      assert.ok(['active', 'no_matches'].includes(result.status), query);
    }
  });

  it('has a deterministic test embedder that knows its synonyms', () => {
    const cos = (a: Float64Array, b: Float64Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
    assert.ok(cos(testEmbed('staff holiday'), testEmbed('employees vacation')) > 0.99);
    assert.ok(cos(testEmbed('staff holiday'), testEmbed('parking garage')) < 0.5);
  });
});

describe('POST /api/os/search', () => {
  let gw: TestGateway;
  let world: World;
  let collectionId: string;
  let workspaceId: string;

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'search');
    workspaceId = await createWorkspace(gw, world.a.tenantId);
    const c = await createCollection(gw, world.a.tenantId, workspaceId);
    collectionId = c.id;
    await addDocument(gw, c, 'Travel policy', [
      { content: 'Economy class is booked for flights under six hours.', headingPath: ['Flights'], page: 2 },
      'Hotel costs are reimbursed up to a nightly limit.',
    ]);
  });
  after(() => gw.close());

  it('answers the snippets, the status and what retrieval ran', async () => {
    const response = await gw.request('POST', '/api/os/search', {
      apiKey: world.a.key.key,
      json: { query: 'flights economy class', workspaceIds: [workspaceId] },
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.status, 'active');
    // No node serves the collection's test embedder: lexical, and it says so and why (no node
    // detail). Without pgvector no query is embedded at all, so there is nothing to explain.
    assert.deepEqual(response.body.retrieval, {
      mode: 'lexical',
      embedder: null,
      ...(gw.ctx.vector ? { note: 'Text search only where test-hash-100 could not embed the query.' } : {}),
    });
    const [snippet] = response.body.data;
    assert.equal(snippet.documentName, 'Travel policy');
    assert.equal(snippet.collectionId, collectionId);
    assert.equal(snippet.workspaceId, workspaceId);
    assert.equal(snippet.chunkIndex, 0);
    assert.deepEqual(snippet.source, { title: 'Travel policy', headingPath: ['Flights'], page: 2 });
    assert.ok(snippet.score > 0 && snippet.score <= 1);
    const member = await gw.request('POST', '/api/os/search', {
      token: world.a.member.token,
      json: { query: 'hotel', ragScopes: [{ collectionIds: [collectionId], topK: 1 }] },
    });
    assert.equal(member.status, 200);
    assert.equal(member.body.data.length, 1);
  });

  it('needs a credential, answers 404 to another tenant, 401 to a revoked key', async () => {
    const json = { query: 'hotel', collectionIds: [collectionId] };
    assert.equal((await gw.request('POST', '/api/os/search', { json })).status, 401);
    const asB = await gw.request('POST', '/api/os/search', { apiKey: world.b.key.key, json });
    assert.equal(asB.status, 404);
    assert.equal(asB.body.detail, 'Collection not found.');
    assert.equal(
      (await gw.request('POST', '/api/os/search', { token: world.b.admin.token, json: { query: 'hotel', workspaceIds: [workspaceId] } }))
        .status,
      404,
    );
    const admin = { tenantId: world.a.tenantId, kind: 'user' as const, subject: world.a.admin.id, roles: ['admin' as const], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, world.a.key.id, 'revoked');
    assert.equal((await gw.request('POST', '/api/os/search', { apiKey: world.a.key.key, json })).status, 401);
  });

  it('refuses malformed input with 400', async () => {
    const bad: [unknown, string][] = [
      [{ collectionIds: [collectionId] }, 'no query'],
      [{ query: '   ', collectionIds: [collectionId] }, 'blank query'],
      [{ query: 'hotel' }, 'no scope'],
      [{ query: 'hotel', workspaceIds: [] }, 'empty scope'],
      [{ query: 'hotel', collectionIds: [collectionId], topK: 51 }, 'topK over 50'],
      [{ query: 'hotel', collectionIds: [collectionId], topK: 0 }, 'topK 0'],
      [{ query: 'hotel', collectionIds: [collectionId], mode: 'semantic' }, 'unknown mode'],
      [{ query: 'hotel', ragScopes: [{}] }, 'empty ragScope'],
      [{ query: 'hotel', ragScopes: [{ collectionIds: [collectionId], minScore: 2 }] }, 'minScore over 1'],
      [{ query: 'hotel', ragScopes: [{ collectionIds: [collectionId], extra: 1 }] }, 'unknown ragScope field'],
      [{ query: 'hotel', collectionIds: Array.from({ length: 101 }, () => collectionId) }, 'too many ids'],
      [{ query: 'a\u0000b', collectionIds: [collectionId] }, 'NUL in the query'],
      [{ query: 42, collectionIds: [collectionId] }, 'query not a string'],
    ];
    for (const [json, label] of bad) {
      const response = await gw.request('POST', '/api/os/search', { token: world.a.admin.token, json });
      assert.equal(response.status, 400, `${label}: ${response.text}`);
      assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    }
  });
});
