// The real thing: the gateway started in-process on an embedded database in a temp
// data dir (no compute node: the built-in embedder is the only one), one tenant, an
// API key and a workspace; the corpus uploaded through the public API as multipart
// and searched with POST /api/os/search, exactly as an integration would.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { createTenant } from '../../src/areas/auth/tenants/service.js';
import { createContext } from '../../src/context.js';
import { buildApp } from '../../src/gateway/app.js';
import { loadConfig } from '../../src/platform/config.js';
import type { CorpusFile } from './dataset.js';
import { MODES, type Mode, type SearchOutcome, type Searcher, type Snippet } from './types.js';

const MEDIA_TYPES: Record<string, string> = {
  md: 'text/markdown',
  csv: 'text/csv',
  txt: 'text/plain',
  html: 'text/html',
  json: 'application/json',
};

interface DocumentRecord {
  id: string;
  name: string;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  error: string | null;
  chunkCount: number;
  stage?: string | null;
}

export interface GatewayOptions {
  logLevel: string;
  ingestTimeoutMs: number;
}

export async function startGatewaySearcher(corpus: CorpusFile[], options: GatewayOptions): Promise<Searcher & { ingest: IngestReport }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-retrieval-bench-'));
  const config = loadConfig({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_TLS: 'off',
    GATEWAY_LOG_LEVEL: options.logLevel,
    GATEWAY_SECRET: randomBytes(32).toString('base64url'),
  });
  const ctx = await createContext(config);
  const app = await buildApp(ctx, { logStream: pino.destination({ dest: '/dev/null', sync: false }) });
  const close = async () => {
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const tenant = await createTenant(ctx, `retrieval-bench-${randomBytes(3).toString('hex')}`);
    const { key } = await issueApiKey(ctx, tenant.id, { name: 'retrieval bench' }, null);
    const call = api(base, key);

    const workspace = (await call('POST', '/api/os/workspaces', { name: 'Retrieval quality benchmark' }, 201)) as { id: string };
    const ingest = await upload(call, workspace.id, corpus, options.ingestTimeoutMs);

    return {
      name: 'gateway',
      modes: MODES,
      ingest,
      async search(query: string, mode: Mode, topK: number): Promise<SearchOutcome> {
        const started = performance.now();
        const body = (await call('POST', '/api/os/search', { query, workspaceIds: [workspace.id], topK, mode }, 200)) as {
          data: Snippet[];
          status?: string;
          retrieval?: SearchOutcome['retrieval'];
        };
        return { snippets: body.data, status: body.status, retrieval: body.retrieval, ms: performance.now() - started };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

type Call = (method: string, route: string, body: unknown, expect: number | number[]) => Promise<unknown>;

function api(base: string, key: string): Call {
  return async (method, route, body, expect) => {
    const isForm = body instanceof FormData;
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined || isForm ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
    });
    const text = await response.text();
    const expected = Array.isArray(expect) ? expect : [expect];
    if (!expected.includes(response.status)) throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : undefined;
  };
}

export interface IngestReport {
  documents: { name: string; id: string; chunkCount: number }[];
  chunks: number;
  seconds: number;
}

async function upload(call: Call, workspaceId: string, corpus: CorpusFile[], timeoutMs: number): Promise<IngestReport> {
  const started = performance.now();
  const form = new FormData();
  for (const file of corpus) {
    const type = MEDIA_TYPES[file.name.split('.').pop() ?? ''] ?? 'application/octet-stream';
    form.append('file', new Blob([new Uint8Array(file.bytes)], { type }), file.name);
  }
  const accepted = (await call('POST', `/api/os/workspaces/${workspaceId}/documents`, form, [200, 202])) as { data: DocumentRecord[] };
  if (accepted.data.length !== corpus.length)
    throw new Error(`uploaded ${corpus.length} files, the gateway answered with ${accepted.data.length} documents`);

  const pending = new Map(accepted.data.map((d) => [d.id, d]));
  const done: DocumentRecord[] = [];
  let lastReport = 0;
  while (pending.size) {
    if (performance.now() - started > timeoutMs)
      throw new Error(
        `ingestion not finished after ${timeoutMs / 1000} s: ${[...pending.values()].map((d) => `${d.name} ${d.status}`).join(', ')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const id of [...pending.keys()]) {
      const doc = (await call('GET', `/api/os/documents/${id}`, undefined, 200)) as DocumentRecord;
      if (doc.status === 'failed') throw new Error(`ingestion of ${doc.name} failed: ${doc.error}`);
      if (doc.status === 'ready') {
        pending.delete(id);
        done.push(doc);
      } else pending.set(id, doc);
    }
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      console.log(
        `  ingesting: ${done.length}/${corpus.length} ready (${[...pending.values()].map((d) => `${d.name}: ${d.stage ?? d.status}`).join('; ')})`,
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const documents = done.map((d) => ({ name: d.name, id: d.id, chunkCount: d.chunkCount }));
  return { documents, chunks: documents.reduce((sum, d) => sum + d.chunkCount, 0), seconds };
}
