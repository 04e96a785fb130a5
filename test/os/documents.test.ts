import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { replaceDocumentChunks } from '../../src/areas/os/chunks/store.js';
import { docxWith, pdfWith, plainZip, uploadFiles } from './documents-support.js';

const sha256 = (content: string | Uint8Array) => createHash('sha256').update(content).digest('hex');

describe('os documents', () => {
  let gw: TestGateway;
  let world: World;
  let adminA: string;
  let memberA: string;
  let keyA: string;
  let wakes = 0;

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'documents');
    adminA = world.a.admin.token;
    memberA = world.a.member.token;
    keyA = world.a.key.key;
    gw.ctx.ingestion = { wake: () => void wakes++ };
  });
  after(() => gw.close());

  async function newCollection(name = 'Manuals'): Promise<{ workspaceId: string; collectionId: string; defaultId: string }> {
    const ws = await gw.request('POST', '/api/os/workspaces', { apiKey: keyA, json: { name } });
    assert.equal(ws.status, 201, ws.text);
    const col = await gw.request('POST', `/api/os/workspaces/${ws.body.id}/collections`, { apiKey: keyA, json: { name } });
    assert.equal(col.status, 201, col.text);
    const list = await gw.request('GET', `/api/os/workspaces/${ws.body.id}/collections`, { apiKey: keyA });
    return { workspaceId: ws.body.id, collectionId: col.body.id, defaultId: list.body.data.find((c: any) => c.isDefault).id };
  }
  const counts = async (collectionId: string) =>
    (await gw.request('GET', `/api/os/collections/${collectionId}`, { apiKey: keyA })).body as {
      documentCount: number;
      chunkCount: number;
    };
  const storedRows = async (collectionId: string) =>
    (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents WHERE collection_id = $1', [collectionId]))[0]!.n;

  it('stores a JSON text upload queued, with its bytes, and answers the same document for the same content', async () => {
    const { collectionId, workspaceId } = await newCollection();
    const before = wakes;
    const text = 'Returns are accepted within 30 days of delivery.';
    const first = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      token: adminA,
      json: { name: 'returns.txt', text, metadata: { department: 'sales', year: 2024 } },
    });
    assert.equal(first.status, 202, first.text);
    assert.match(first.body.id, /^doc_/);
    assert.deepEqual(
      { ...first.body, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        collectionId,
        workspaceId,
        name: 'returns.txt',
        mediaType: 'text/plain',
        bytes: Buffer.byteLength(text),
        sha256: sha256(text),
        status: 'queued',
        stage: null,
        error: null,
        chunkCount: 0,
        metadata: { department: 'sales', year: 2024 },
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(wakes, before + 1, 'ingestion is woken after the commit');
    const [content] = await gw.ctx.db.query<{ content: Buffer }>('SELECT content FROM document_contents WHERE document_id = $1', [
      first.body.id,
    ]);
    assert.equal(content!.content.toString('utf8'), text);

    const again = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: 'copy.txt', text },
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.body.name, 'returns.txt', 'the existing document, not a renamed copy');
    assert.equal(wakes, before + 1, 'nothing new, nothing to wake');
    assert.equal((await counts(collectionId)).documentCount, 1);

    const read = await gw.request('GET', `/api/os/documents/${first.body.id}`, { token: memberA });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, first.body);
  });

  it('makes one document of the same content uploaded twice at once', async () => {
    const { collectionId } = await newCollection();
    const json = { name: 'race.txt', text: `raced ${Date.now()}` };
    const answers = await Promise.all(
      [0, 1, 2].map(() => gw.request('POST', `/api/os/collections/${collectionId}/documents`, { apiKey: keyA, json })),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 202]);
    assert.equal(new Set(answers.map((a) => a.body.id)).size, 1);
    assert.equal(await storedRows(collectionId), 1);
    assert.equal((await counts(collectionId)).documentCount, 1);
  });

  it('takes files of every supported type in one multipart upload, detected by content, with shared metadata', async () => {
    const { collectionId } = await newCollection();
    const pdf = await pdfWith(['Annual report 2024', 'Revenue grew by 12 percent.']);
    const docx = await docxWith('The board meets on the first Monday of each month.');
    const files = [
      { name: 'notes.txt', content: 'Plain notes about the office.' },
      { name: 'guide.md', content: '# Guide\n\nSteps to follow.' },
      { name: 'page.html', content: '<!doctype html><html><body><h1>Hours</h1><p>9 to 5</p></body></html>' },
      { name: 'fragment.htm', content: '<h2>Parking</h2><p>Level 2</p>' },
      { name: 'prices.csv', content: 'item,price\nwidget,3.50\n"gadget, large",7.00\n' },
      { name: 'config.json', content: '{"plans":[{"name":"basic","price":5}]}' },
      { name: 'report.pdf', content: pdf },
      { name: 'minutes.docx', content: docx },
      // Wrong extensions: the content decides.
      { name: 'really-a-pdf.txt', content: await pdfWith(['renamed']) },
      { name: 'not-a-pdf.pdf', content: 'only text in here' },
      { name: 'markup.txt', content: '  <html><body>hi</body></html>' },
      { name: 'ragged.csv', content: 'a,b\nc\nd;e;f\n' },
      { name: 'declared', content: '# Title', type: 'text/markdown' },
    ];
    const answer = await uploadFiles(gw, `/api/os/collections/${collectionId}/documents`, { apiKey: keyA }, files, {
      metadata: '{"source":"import"}',
    });
    assert.equal(answer.status, 202, answer.text);
    assert.deepEqual(
      answer.body.data.map((d: any) => [d.name, d.mediaType]),
      [
        ['notes.txt', 'text/plain'],
        ['guide.md', 'text/markdown'],
        ['page.html', 'text/html'],
        ['fragment.htm', 'text/html'],
        ['prices.csv', 'text/csv'],
        ['config.json', 'application/json'],
        ['report.pdf', 'application/pdf'],
        ['minutes.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
        ['really-a-pdf.txt', 'application/pdf'],
        ['not-a-pdf.pdf', 'text/plain'],
        ['markup.txt', 'text/html'],
        ['ragged.csv', 'text/plain'],
        ['declared', 'text/markdown'],
      ],
    );
    for (const [i, doc] of answer.body.data.entries()) {
      assert.equal(doc.status, 'queued');
      assert.deepEqual(doc.metadata, { source: 'import' });
      assert.equal(doc.sha256, sha256(files[i]!.content));
      assert.equal(doc.bytes, Buffer.from(files[i]!.content).length);
    }
    assert.equal((await counts(collectionId)).documentCount, files.length);

    const again = await uploadFiles(gw, `/api/os/collections/${collectionId}/documents`, { apiKey: keyA }, files.slice(0, 2));
    assert.equal(again.status, 200, 'every file was already there');
    assert.deepEqual(
      again.body.data.map((d: any) => d.id),
      answer.body.data.slice(0, 2).map((d: any) => d.id),
    );
    const single = await uploadFiles(gw, `/api/os/collections/${collectionId}/documents`, { apiKey: keyA }, [
      { name: 'one.txt', content: 'one file is still a list' },
    ]);
    assert.equal(single.status, 202);
    assert.equal(single.body.data.length, 1);
  });

  it('keeps the uploaded name as text, never as a path', async () => {
    const { collectionId } = await newCollection();
    const names = [
      ['../../etc/passwd', 'passwd'],
      ['C:\\Users\\me\\secret.txt', 'secret.txt'],
      ['Ünïcödé – notes 📄.md', 'Ünïcödé – notes 📄.md'],
      [`${'x'.repeat(300)}.txt`, 'x'.repeat(255)],
    ];
    const answer = await uploadFiles(
      gw,
      `/api/os/collections/${collectionId}/documents`,
      { apiKey: keyA },
      names.map(([name], i) => ({ name: name!, content: `file ${i}` })),
    );
    assert.equal(answer.status, 202, answer.text);
    assert.deepEqual(
      answer.body.data.map((d: any) => d.name),
      names.map(([, kept]) => kept),
    );
    const json = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: '/var/data/../x.md', text: '# heading' },
    });
    assert.equal(json.body.name, 'x.md');
    assert.equal(json.body.mediaType, 'text/markdown');
    // JSON carries text: a text that starts like a PDF is still text.
    const pdfLike = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: 'fake.pdf', text: '%PDF-1.7 is how a PDF starts' },
    });
    assert.equal(pdfLike.body.mediaType, 'text/plain');
  });

  it('refuses unsupported and empty files with 415 and 400, storing nothing of the request', async () => {
    const { collectionId } = await newCollection();
    const good = { name: 'good.txt', content: `good ${Date.now()}` };
    const path = `/api/os/collections/${collectionId}/documents`;
    for (const [bad, status, code] of [
      [{ name: 'archive.zip', content: await plainZip() }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [{ name: 'fake.docx', content: await plainZip() }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [
        { name: 'image.png', content: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe]) },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [{ name: 'utf16.txt', content: Buffer.from('\ufeffhello', 'utf16le') }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [{ name: 'latin1.txt', content: Buffer.from('café', 'latin1') }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [{ name: 'empty.txt', content: '' }, 400, 'VALIDATION_FAILED'],
    ] as const) {
      const answer = await uploadFiles(gw, path, { apiKey: keyA }, [good, bad]);
      assert.equal(answer.status, status, `${bad.name}: ${answer.text}`);
      assert.equal(answer.body.code, code, bad.name);
      assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    }
    const emptyText = await gw.request('POST', path, { apiKey: keyA, json: { name: 'e.txt', text: '' } });
    assert.equal(emptyText.status, 400);
    assert.equal(emptyText.body.errors[0].field, 'text');
    assert.equal(await storedRows(collectionId), 0);
    assert.equal((await counts(collectionId)).documentCount, 0);
  });

  it('checks the metadata: a JSON object of at most 16 KB', async () => {
    const { collectionId } = await newCollection();
    const path = `/api/os/collections/${collectionId}/documents`;
    const file = [{ name: 'm.txt', content: 'metadata test' }];
    const typed = await uploadFiles(gw, path, { apiKey: keyA }, file, { metadata: '{"a":[1,2]}', metadataType: 'application/json' });
    assert.equal(typed.status, 202, typed.text);
    assert.deepEqual(typed.body.data[0].metadata, { a: [1, 2] });
    for (const [metadata, metadataType] of [
      ['[1,2]'],
      ['"text"'],
      ['{nope'],
      ['{nope', 'application/json'],
      [JSON.stringify({ big: 'x'.repeat(17 * 1024) })],
      ['{"__proto__":{"polluted":true}}'],
      ['{"nul":"a\\u0000b"}'],
      // Regression: 10,000 nested objects overflowed the stack of the size check (a 500, found by the fuzz).
      [`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
    ] as const) {
      const answer = await uploadFiles(gw, path, { apiKey: keyA }, [{ name: 'n.txt', content: `x ${metadata}` }], {
        metadata,
        ...(metadataType ? { metadataType } : {}),
      });
      assert.equal(answer.status, 400, `${metadata.slice(0, 40)}: ${answer.text}`);
      assert.equal(answer.body.errors?.[0]?.field ?? 'metadata', 'metadata', answer.text);
    }
    for (const metadata of [[1], 'text', { big: 'x'.repeat(17 * 1024) }, { nul: 'a\u0000b' }]) {
      const answer = await gw.request('POST', path, {
        apiKey: keyA,
        json: { name: 'j.txt', text: `y ${JSON.stringify(metadata)}`, metadata },
      });
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.body.errors[0].field.split('.')[0], 'metadata', answer.text);
    }
    // As JSON too (sent as text: the test's own JSON.stringify could not write it).
    const deep = await gw.request('POST', path, {
      apiKey: keyA,
      headers: { 'content-type': 'application/json' },
      body: `{"name":"d.txt","text":"deep","metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    });
    assert.equal(deep.status, 400, deep.text);
    assert.equal(deep.body.errors[0].field, 'metadata', deep.text);
    const stray = await uploadFiles(gw, path, { apiKey: keyA }, file, { extraParts: [['title', 'x']] });
    assert.equal(stray.status, 400);
    assert.equal(stray.body.errors[0].field, 'title');
    const noFile = await uploadFiles(gw, path, { apiKey: keyA }, [], { metadata: '{}' });
    assert.equal(noFile.status, 400);
    assert.equal(noFile.body.errors[0].field, 'file');
    assert.equal(await storedRows(collectionId), 1);
  });

  it("uploads into the workspace's default collection", async () => {
    const { workspaceId, defaultId } = await newCollection();
    const json = await gw.request('POST', `/api/os/workspaces/${workspaceId}/documents`, {
      apiKey: keyA,
      json: { name: 'a.txt', text: 'default a' },
    });
    assert.equal(json.status, 202, json.text);
    assert.equal(json.body.collectionId, defaultId);
    const multipart = await uploadFiles(gw, `/api/os/workspaces/${workspaceId}/documents`, { token: adminA }, [
      { name: 'b.txt', content: 'default b' },
    ]);
    assert.equal(multipart.status, 202, multipart.text);
    assert.equal(multipart.body.data[0].collectionId, defaultId);
    assert.equal((await counts(defaultId)).documentCount, 2);
  });

  it('lists a collection’s documents in pages, oldest first', async () => {
    const { collectionId } = await newCollection();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
        apiKey: keyA,
        json: { name: `p${i}.txt`, text: `page test ${i}` },
      });
      ids.push(answer.body.id);
    }
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const page: any = await gw.request('GET', `/api/os/collections/${collectionId}/documents?limit=2${next ? `&after=${next}` : ''}`, {
        token: memberA,
      });
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.data.length <= 2);
      seen.push(...page.body.data.map((d: any) => d.id));
      next = page.body.next;
    } while (next);
    assert.deepEqual(seen, ids);
    const all = await gw.request('GET', `/api/os/collections/${collectionId}/documents`, { token: memberA });
    assert.equal(all.body.data.length, 5);
    assert.equal(all.body.next, null);
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'limit=-1', 'after=doc_nope', `after=${collectionId}`]) {
      const bad = await gw.request('GET', `/api/os/collections/${collectionId}/documents?${query}`, { token: adminA });
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.errors[0].field, query.split('=')[0], query);
    }
  });

  it('lists a document’s chunks in pages, and deleting the document takes them out of retrieval at once', async () => {
    const { collectionId } = await newCollection();
    const doc = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: 'handbook.md', text: '# Leave\n\nTwenty-five days.\n\n# Travel\n\nEconomy class.' },
    });
    const other = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: 'other.md', text: 'another document' },
    });
    const ref = (documentId: string) => ({ tenantId: world.a.tenantId, collectionId, documentId, language: 'english' });
    await gw.ctx.db.tx(async (q) => {
      await replaceDocumentChunks(q, ref(doc.body.id), [
        { content: 'Twenty-five days of leave.', title: 'handbook.md', headingPath: ['Leave'], page: null, tokenCount: 6 },
        { content: 'Travel economy class.', title: 'handbook.md', headingPath: ['Travel'], page: 2, tokenCount: 4 },
        { content: 'Expenses within a week.', title: 'handbook.md', headingPath: ['Travel', 'Expenses'], page: 3, tokenCount: 5 },
      ]);
      await replaceDocumentChunks(q, ref(other.body.id), [
        { content: 'another document', title: 'other.md', headingPath: [], page: null, tokenCount: 2 },
      ]);
    });
    const first = await gw.request('GET', `/api/os/documents/${doc.body.id}/chunks?limit=2`, { token: memberA });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      first.body.data.map((c: any) => [c.chunkIndex, c.content, c.headingPath, c.page, c.tokenCount, c.title]),
      [
        [0, 'Twenty-five days of leave.', ['Leave'], null, 6, 'handbook.md'],
        [1, 'Travel economy class.', ['Travel'], 2, 4, 'handbook.md'],
      ],
    );
    assert.match(first.body.data[0].id, /^chk_/);
    assert.equal(first.body.next, '1');
    const rest = await gw.request('GET', `/api/os/documents/${doc.body.id}/chunks?limit=2&after=1`, { token: memberA });
    assert.deepEqual(
      rest.body.data.map((c: any) => c.headingPath),
      [['Travel', 'Expenses']],
    );
    assert.equal(rest.body.next, null);
    const badCursor = await gw.request('GET', `/api/os/documents/${doc.body.id}/chunks?after=x`, { token: memberA });
    assert.equal(badCursor.status, 400);
    assert.equal((await counts(collectionId)).chunkCount, 4);

    assert.equal((await gw.request('DELETE', `/api/os/documents/${doc.body.id}`, { token: memberA })).status, 403);
    assert.equal((await gw.request('DELETE', `/api/os/documents/${doc.body.id}`, { apiKey: keyA })).status, 204);
    assert.equal((await gw.request('GET', `/api/os/documents/${doc.body.id}`, { apiKey: keyA })).status, 404);
    assert.equal((await gw.request('GET', `/api/os/documents/${doc.body.id}/chunks`, { apiKey: keyA })).status, 404);
    assert.equal((await gw.request('DELETE', `/api/os/documents/${doc.body.id}`, { apiKey: keyA })).status, 404);
    const left = await gw.ctx.db.query<{ document_id: string }>('SELECT document_id FROM chunks WHERE collection_id = $1', [collectionId]);
    assert.deepEqual(left, [{ document_id: other.body.id }]);
    const contents = await gw.ctx.db.query('SELECT 1 FROM document_contents WHERE document_id = $1', [doc.body.id]);
    assert.equal(contents.length, 0);
    assert.deepEqual(await counts(collectionId).then((c) => [c.documentCount, c.chunkCount]), [1, 1]);
    // Its terms are gone from BM25's statistics; the other document's remain.
    const terms = await gw.ctx.db.query<{ term: string }>('SELECT term FROM collection_terms WHERE collection_id = $1 ORDER BY term', [
      collectionId,
    ]);
    assert.deepEqual(
      terms.map((t) => t.term),
      ['anoth', 'document', 'other.md'],
    );
    // The same content can come back as a new document.
    const reupload = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
      apiKey: keyA,
      json: { name: 'handbook.md', text: '# Leave\n\nTwenty-five days.\n\n# Travel\n\nEconomy class.' },
    });
    assert.equal(reupload.status, 202);
    assert.notEqual(reupload.body.id, doc.body.id);
  });
});
