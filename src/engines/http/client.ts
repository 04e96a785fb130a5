// The HTTP side every remote engine adapter shares: one keep-alive undici Pool
// per node, the node's auth header, bounded body reads, and the mapping of
// transport failures and non-2xx answers to EngineErrors (see errors.ts).
import type { LookupFunction } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import type { EngineKind } from '../types.js';
import { parseNodeUrl } from './base-url.js';
import { engineError, requestError, statusError, type ErrorContext } from './errors.js';

/** Concurrent connections per node: generous, engines queue work themselves. */
const CONNECTIONS = 128;
/** An error body is a message, not a payload: read at most this much of it. */
const MAX_ERROR_BODY = 64 * 1024;
/** JSON answers (model lists, completions, embeddings of large batches). */
const MAX_JSON_BODY = 256 * 1024 * 1024;

export interface EngineHttpOptions {
  kind: EngineKind;
  url: string;
  apiKey?: string;
  timeoutMs: number;
  /** A path suffix operators may include in the URL that the adapter adds itself (`/v1`). */
  stripSuffix?: string;
  /** Name resolution for new connections (the deny-list guard). */
  lookup?: LookupFunction;
}

export type ResponseBody = Dispatcher.ResponseData['body'];

export class EngineHttp {
  readonly ctx: ErrorContext;
  private readonly pool: Pool;
  private readonly prefix: string;
  // Built once per node: undici only reads them.
  private readonly getHeaders: Record<string, string>;
  private readonly postHeaders: Record<string, string>;

  constructor(options: EngineHttpOptions) {
    const address = parseNodeUrl(options.url, options.stripSuffix);
    this.prefix = address.prefix;
    this.ctx = {
      label: `${options.kind} node ${address.display}`,
      secrets: [options.apiKey ?? '', address.basicAuth ?? ''].filter((s) => s.length > 0),
    };
    const authorization = options.apiKey ? `Bearer ${options.apiKey}` : address.basicAuth;
    this.getHeaders = { accept: 'application/json', ...(authorization ? { authorization } : {}) };
    this.postHeaders = { ...this.getHeaders, 'content-type': 'application/json' };
    this.pool = new Pool(address.origin, {
      connections: CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: Math.min(options.timeoutMs, 10_000), ...(options.lookup ? { lookup: options.lookup } : {}) },
    });
  }

  /**
   * Sends one request and resolves once a 2xx status is in, body unread (the
   * caller streams it). Anything else rejects with an EngineError, the error
   * body read (bounded) for its message. `model` marks model-specific requests
   * (a 404 then may mean the model is missing; statusError reads which).
   */
  async send(
    method: 'GET' | 'POST',
    path: string,
    payload: unknown,
    signal: AbortSignal,
    model?: string,
  ): Promise<Dispatcher.ResponseData> {
    if (signal.aborted) throw requestError(this.ctx, signal.reason, signal);
    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({
        method,
        path: this.prefix + path,
        headers: method === 'GET' ? this.getHeaders : this.postHeaders,
        body: payload === undefined ? null : JSON.stringify(payload),
        signal,
      });
    } catch (err) {
      throw requestError(this.ctx, err, signal);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    let text: string;
    try {
      text = await readText(response.body, MAX_ERROR_BODY, true);
    } catch (err) {
      throw requestError(this.ctx, err, signal);
    }
    throw statusError(this.ctx, response.statusCode, text, model, path);
  }

  /** `send` and parse the whole JSON answer. */
  async json<T>(method: 'GET' | 'POST', path: string, payload: unknown, signal: AbortSignal, model?: string): Promise<T> {
    const response = await this.send(method, path, payload, signal, model);
    let text: string;
    try {
      text = await readText(response.body, MAX_JSON_BODY, false);
    } catch (err) {
      throw requestError(this.ctx, err, signal);
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw engineError(this.ctx, 'upstream_error', `${this.ctx.label} answered with a body that is not JSON`);
    }
  }

  /** A 2xx answer that does not have the shape the protocol promises. */
  malformed(what: string): never {
    throw engineError(this.ctx, 'upstream_error', `${this.ctx.label} answered ${what} in an unexpected shape`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * Reads a body to the end, up to `limit` bytes. Past the limit it either keeps
 * what fits (`truncate`, for error messages) or fails; the rest is discarded by
 * destroying the body, which also frees the connection.
 */
async function readText(body: ResponseBody, limit: number, truncate: boolean): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      if (!truncate) throw new Error(`answer larger than ${limit} bytes`);
      chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
