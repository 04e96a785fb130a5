// Pulling a GGUF model from a URL into the models directory. The download goes to
// `.partial/` (never listed), is checked (size cap, optional SHA-256, GGUF header,
// a trial load in the llama.cpp child) and only then renamed into place, which is
// atomic and replaces an older file of the same name only at that moment.
//
// Whose fault a failure is decides what the router does with the node, so it is
// settled here: the download from the caller's URL failing in any way (refused,
// DNS, an HTTP error, cut off, stalled) is `download_failed` and a file the checks
// refuse is `rejected`, both the caller's; only this node's own trouble (its disk,
// its child process) is a failure that counts against it.
import { createHash, randomUUID } from 'node:crypto';
import { access, link, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { EngineError, type PullProgress, type PullRequest } from '../types.js';
import { describeTransportError } from '../http/errors.js';
import { PARTIAL_DIR, modelIdFromName, type ModelCatalog } from './catalog.js';
import { checkGgufHeader } from './gguf-header.js';

export interface PullDependencies {
  catalog: ModelCatalog;
  maxBytes: number;
  timeoutMs: number;
  checkUrl?: (url: URL) => Promise<void>;
  /** Name resolution for the download's connections (the deny-list guard). */
  lookup?: LookupFunction | undefined;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Loads the file once in the llama.cpp child; rejects when llama.cpp refuses it or dies on it. */
  trialLoad: (file: string, signal: AbortSignal) => Promise<void>;
}

const MAX_REDIRECTS = 5;
/** Progress frames: the first, the last, and in between at most one per interval (~10/s on any link). */
const PROGRESS_INTERVAL_MS = 100;
const WRITE_BATCH_BYTES = 1024 * 1024;
/** A partial file untouched this long belongs to a pull that died with its process. */
const STALE_PARTIAL_MS = 60 * 60 * 1000;

export async function* pullModel(pull: PullRequest, deps: PullDependencies): AsyncGenerator<PullProgress> {
  const id = modelIdFromName(pull.model);
  const expected = pull.sha256 === undefined ? undefined : parseSha256(pull.sha256);
  const url = parseUrl(pull.url);
  pull.signal.throwIfAborted();
  await deps.catalog.ensureDir();
  const target = deps.catalog.pathFor(id);
  const mayReplace = pull.replace !== false;
  if (!mayReplace && (await exists(target))) throw taken(id);
  const partialDir = path.join(deps.catalog.dir, PARTIAL_DIR);
  await mkdir(partialDir, { recursive: true });
  await removeStalePartials(partialDir);

  const partial = path.join(partialDir, `${id}.${randomUUID()}.partial`);
  const agent = new Agent({
    headersTimeout: deps.timeoutMs,
    bodyTimeout: deps.timeoutMs,
    connections: 1,
    ...(deps.lookup ? { connect: { lookup: deps.lookup } } : {}),
  });
  const started = performance.now();
  let placed = false;
  try {
    const response = await download(url, agent, deps, pull.signal);
    const length = response.headers['content-length'];
    const total = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : undefined;
    if (total !== undefined && total > deps.maxBytes) {
      throw new EngineError('rejected', `The file is ${total} bytes; the pull limit is ${deps.maxBytes} bytes.`);
    }
    yield progress(total, 0);

    const hash = createHash('sha256');
    let completed = 0;
    const file = await open(partial, 'wx', 0o644);
    // One write in flight while the next batch downloads; its failure is kept, not left unhandled.
    let writing: Promise<unknown> = Promise.resolve();
    const written = async () => {
      const failed = await writing;
      if (failed) throw failed;
    };
    const flush = async (chunks: Buffer[]) => {
      await written();
      writing = file.writev(chunks).then(
        () => undefined,
        (error: unknown) => error ?? new Error('write failed'),
      );
    };
    try {
      let lastAt = performance.now();
      // Socket chunks are ~64 KiB; writing them in ~1 MiB batches saves most of the write calls.
      let batch: Buffer[] = [];
      let batchBytes = 0;
      for await (const chunk of received(response.body as AsyncIterable<Buffer>, url)) {
        completed += chunk.length;
        if (completed > deps.maxBytes)
          throw new EngineError('rejected', `The file is larger than the pull limit of ${deps.maxBytes} bytes.`);
        hash.update(chunk);
        batch.push(chunk);
        batchBytes += chunk.length;
        if (batchBytes >= WRITE_BATCH_BYTES) {
          await flush(batch);
          batch = [];
          batchBytes = 0;
        }
        const now = performance.now();
        if (now - lastAt >= PROGRESS_INTERVAL_MS) {
          lastAt = now;
          yield progress(total, completed);
        }
      }
      if (batch.length > 0) await flush(batch);
      await written();
      await file.sync();
    } finally {
      await writing;
      await file.close();
    }
    if (total !== undefined && completed !== total) {
      throw new EngineError('download_failed', `The download ended after ${completed} of ${total} bytes.`);
    }
    yield progress(total, completed);
    const seconds = (performance.now() - started) / 1000;
    deps.log(
      'info',
      `pulled ${completed} bytes for local model ${id} in ${seconds.toFixed(2)} s (${(completed / 1048576 / seconds).toFixed(1)} MiB/s)`,
    );

    const digest = hash.digest('hex');
    if (expected !== undefined) {
      yield { status: 'verifying sha256 digest', digest: `sha256:${digest}` };
      if (digest !== expected) throw new EngineError('rejected', `SHA-256 mismatch: expected ${expected}, the download is ${digest}.`);
    }

    yield { status: 'validating' };
    const header = await checkGgufHeader(partial);
    if (!header.ok) throw new EngineError('rejected', `The file is not a usable GGUF model: ${header.reason}.`);
    await deps.trialLoad(partial, pull.signal).catch((error: unknown) => {
      // Stopped, or the local engine itself could not run (its process did not start):
      // not the file's fault, and the second counts against the node.
      if (error instanceof EngineError && (error.failure === 'aborted' || error.failure === 'unreachable')) throw error;
      const why =
        error instanceof EngineError && error.failure === 'upstream_error'
          ? `loading it crashed llama.cpp (${error.message})`
          : (error as Error).message;
      throw new EngineError('rejected', `The file was refused: ${why}`, { cause: error });
    });

    if (mayReplace) {
      await rename(partial, target);
    } else {
      // A link is refused where the name exists, atomically: a pull that took the name meanwhile is not replaced either.
      await link(partial, target).catch((error: unknown) => {
        throw (error as { code?: string }).code === 'EEXIST' ? taken(id) : error;
      });
      await rm(partial, { force: true });
    }
    placed = true;
    yield { status: 'success' };
  } catch (error) {
    throw asEngineError(error, pull.signal);
  } finally {
    if (!placed) await rm(partial, { force: true });
    await agent.destroy().catch(() => {});
  }
}

/** GETs the URL, following up to MAX_REDIRECTS redirects; every hop is checked first. */
async function download(start: URL, agent: Agent, deps: PullDependencies, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
  let url = start;
  for (let hop = 0; ; hop++) {
    await deps.checkUrl?.(url).catch((error: unknown) => {
      throw new EngineError('rejected', `The pull failed: ${(error as Error).message}`, { cause: error });
    });
    const response = await request(url, { dispatcher: agent, method: 'GET', signal, headers: { accept: '*/*' } }).catch(
      (error: unknown) => {
        throw downloadError(error, url);
      },
    );
    const { statusCode } = response;
    // The body of an answer we do not keep: a failure to read it changes nothing.
    if (statusCode !== 200) await response.body.dump().catch(() => {});
    if (statusCode >= 300 && statusCode < 400 && statusCode !== 304) {
      const location = response.headers.location;
      if (typeof location !== 'string')
        throw new EngineError('download_failed', `The download failed: ${safeUrl(url)} answered HTTP ${statusCode} without a Location.`);
      if (hop >= MAX_REDIRECTS) throw new EngineError('download_failed', `The download failed: more than ${MAX_REDIRECTS} redirects.`);
      const next = parseUrl(new URL(location, url).toString());
      if (url.protocol === 'https:' && next.protocol === 'http:')
        throw new EngineError('rejected', 'A redirect from https to http was refused.');
      url = next;
      continue;
    }
    if (statusCode !== 200) {
      throw new EngineError('download_failed', `The download failed: ${safeUrl(url)} answered HTTP ${statusCode}.`, { status: statusCode });
    }
    return response;
  }
}

/** The response body as it arrives, its transport failures being the download's. */
async function* received(body: AsyncIterable<Buffer>, url: URL): AsyncGenerator<Buffer> {
  try {
    yield* body;
  } catch (error) {
    throw downloadError(error, url);
  }
}

/**
 * A transport failure of the download (refused, reset, DNS, TLS, a deny-listed
 * address at connect time, no data in time): the URL's, never this node's.
 */
function downloadError(error: unknown, url: URL): unknown {
  if (error instanceof EngineError) return error;
  const code = (error as { code?: string } | null)?.code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new EngineError('download_failed', `The download stalled: ${safeUrl(url)} sent nothing in time.`, { cause: error });
  }
  return new EngineError('download_failed', `The download failed: ${describeTransportError(error)}`, { cause: error });
}

function taken(id: string): EngineError {
  return new EngineError(
    'conflict',
    `A model named "${id}" is already on this engine, which other tenants share; only a platform admin can replace it. Pull it under another name.`,
  );
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

function progress(total: number | undefined, completed: number): PullProgress {
  return total === undefined ? { status: 'downloading', completed } : { status: 'downloading', total, completed };
}

function parseUrl(value: string | undefined): URL {
  if (!value) throw new EngineError('rejected', 'A pull into the local engine needs the URL of a GGUF file (`url`).');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EngineError('rejected', 'The pull URL is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EngineError('rejected', 'The pull URL must be http or https.');
  if (url.username || url.password) throw new EngineError('rejected', 'The pull URL must not carry credentials.');
  return url;
}

function parseSha256(value: string): string {
  const hex = value.toLowerCase().replace(/^sha256:/, '');
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new EngineError('rejected', '`sha256` must be 64 hexadecimal digits.');
  return hex;
}

/** For messages: no query string (signed URLs carry tokens there). */
function safeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function asEngineError(error: unknown, signal: AbortSignal): EngineError {
  if (signal.aborted) return new EngineError('aborted', 'The pull was aborted.');
  if (error instanceof EngineError) return error;
  // The download's and the checks' failures are EngineErrors by now: what is left is
  // this node's own (its disk full or not writable), which counts against it. Only the
  // code goes into the message, which tenant admins read: the fs message names our paths.
  const code = (error as { code?: unknown } | null)?.code;
  return new EngineError('upstream_error', `The pull failed on this node${typeof code === 'string' ? ` (${code})` : ''}.`, {
    cause: error,
  });
}

async function removeStalePartials(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.partial')) continue;
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_PARTIAL_MS) await rm(file, { force: true });
  }
}
