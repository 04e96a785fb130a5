// What every answer must be, whatever the input: no 5xx, no body over 64 KiB (but a
// success whose size the request sets, as embeddings'), and
// every error the one problem+json shape carrying the request's correlation id.
// Failures are collected, not thrown, so one run shows every distinct one.
import type { FuzzCase } from './cases.js';
import { BODY_LIMIT, type Answer } from './send.js';

const ACCEPTED_CORRELATION = /^[A-Za-z0-9._-]{1,64}$/;

/** The rules `answer` breaks, each as [kind, detail]; kind groups failures of one cause. */
export function check(c: FuzzCase, a: Answer): [string, string][] {
  if (a.error) return [['no answer', a.error]];
  const found: [string, string][] = [];
  if (a.status >= 500 && !byContract(c, a)) found.push(['5xx', `status ${a.status}`]);
  if (a.size > BODY_LIMIT && !sizedByRequest(c, a)) found.push(['body over 64 KiB', `${a.size} bytes`]);
  if (c.expect && !c.expect.statuses.includes(a.status) && !(mcpEndpoint(c) && a.status === 405))
    found.push([`expected ${c.expect.statuses.join('/')}`, `${c.expect.why}; got ${a.status}`]);
  if (a.status >= 400)
    found.push(...(mcpEndpoint(c) && !isProblem(a) ? jsonRpcShape(c, a) : scimEndpoint(c, a) ? scimErrorShape(c, a) : problemShape(c, a)));
  return found;
}

/**
 * The SCIM routes answer every refusal in SCIM's error schema (RFC 7644 §3.12), the
 * edge's 401 included. A mangled path (double slashes, an encoded letter) may reach no
 * SCIM route and be answered by the gateway itself, in problem+json: either shape is
 * then right, as long as it is one of them whole.
 */
function scimEndpoint(c: FuzzCase, a: Answer): boolean {
  if (!/^[A-Z]+ \/api\/auth\/scim\/v2\//.test(c.route)) return false;
  return c.path.startsWith('/api/auth/scim/v2/') || !isProblem(a);
}

function scimErrorShape(c: FuzzCase, a: Answer): [string, string][] {
  const value = a.headers['content-type'];
  const contentType = (Array.isArray(value) ? value.join(', ') : value) ?? '(none)';
  if (!contentType.startsWith('application/scim+json')) return [['SCIM error not application/scim+json', `content-type ${contentType}`]];
  if (!a.headers['x-correlation-id']) return [['error without X-Correlation-ID', 'no header']];
  if (c.method === 'HEAD' || a.size > BODY_LIMIT) return [];
  let body: any;
  try {
    body = JSON.parse(a.body.toString('utf8'));
  } catch {
    return [['SCIM error body not JSON', 'unparsable']];
  }
  if (
    body?.schemas?.[0] !== 'urn:ietf:params:scim:api:messages:2.0:Error' ||
    body.status !== String(a.status) ||
    typeof body.detail !== 'string'
  )
    return [['SCIM error fields wrong', JSON.stringify(body).slice(0, 200)]];
  return [];
}

/**
 * The MCP endpoint (`/api/llm/v1/mcp`, `/mcp/{serverName}`) reads its own bodies and
 * answers what it refuses as JSON-RPC errors, as MCP clients expect (issue 29); the
 * edge's refusals before it (401, 403) stay problem+json. GET, DELETE and HEAD are 405
 * whatever the body.
 */
function mcpEndpoint(c: FuzzCase): boolean {
  return /^[A-Z]+ \/api\/llm\/v1\/mcp(\/:serverName)?$/.test(c.route);
}

function isProblem(a: Answer): boolean {
  const value = a.headers['content-type'];
  return (Array.isArray(value) ? value.join(', ') : (value ?? '')).startsWith('application/problem+json');
}

function jsonRpcShape(c: FuzzCase, a: Answer): [string, string][] {
  if (!a.headers['x-correlation-id']) return [['error without X-Correlation-ID', 'no header']];
  if (c.method === 'HEAD' || a.size > BODY_LIMIT) return [];
  let body: any;
  try {
    body = JSON.parse(a.body.toString('utf8'));
  } catch {
    return [['MCP error body not JSON', 'unparsable']];
  }
  if (body?.jsonrpc !== '2.0' || typeof body.error?.code !== 'number' || typeof body.error?.message !== 'string' || !('id' in body))
    return [['MCP error not a JSON-RPC error', JSON.stringify(body).slice(0, 200)]];
  return [];
}

/**
 * A success as large as the caller asked for: embeddings answer one vector per input (up
 * to 2,048). Or the API's own description, the same for every caller: the OpenAPI document
 * (/openapi.json, /docs/json and /docs/yaml, ~400 KB) and the docs UI's scripts; or the
 * console's built files (/assets/, ~110 KB for its largest script), the same for everyone.
 */
function sizedByRequest(c: FuzzCase, a: Answer): boolean {
  if (a.status !== 200) return false;
  const path = c.path.split(/[?#]/)[0]!.toLowerCase();
  // As the router reads it: slashes doubled, letters percent-encoded.
  const routed = safeDecode(path).replace(/\/{2,}/g, '/');
  if (c.method === 'GET' || c.method === 'HEAD')
    return routed === '/openapi.json' || routed.startsWith('/docs/') || routed.startsWith('/assets/');
  return c.method === 'POST' && path.endsWith('/api/llm/v1/embeddings');
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * 5xx answers that are the contract, not a crash: spec rule 3's 500 on `POST /chat`
 * with an API key, and the 503 for embeddings asked of a database without pgvector.
 */
function byContract(c: FuzzCase, a: Answer): boolean {
  const code = codeOf(a);
  if (a.status === 503 && code === 'VECTOR_UNAVAILABLE') return true;
  return (
    a.status === 500 &&
    code === 'USER_IDENTITY_REQUIRED' &&
    c.credential === 'apiKey' &&
    c.path.split('?')[0]!.toLowerCase().endsWith('/api/llm/v1/chat')
  );
}

function codeOf(a: Answer): string | undefined {
  try {
    return JSON.parse(a.body.toString('utf8')).code;
  } catch {
    return undefined;
  }
}

function problemShape(c: FuzzCase, a: Answer): [string, string][] {
  const header = (name: string) => {
    const value = a.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const contentType = header('content-type') ?? '(none)';
  if (!contentType.startsWith('application/problem+json')) return [['error not problem+json', `content-type ${contentType}`]];
  const correlationId = header('x-correlation-id');
  if (!correlationId) return [['error without X-Correlation-ID', 'no header']];
  const sent = c.headers['x-correlation-id'];
  if (sent !== undefined && ACCEPTED_CORRELATION.test(sent) && correlationId !== sent)
    return [['client correlation id not kept', `sent ${sent}, got ${correlationId}`]];
  // A HEAD answer has no body; one over the bound was read only in part (and is reported as such).
  if (c.method === 'HEAD' || a.size > BODY_LIMIT) return [];
  let body: any;
  try {
    body = JSON.parse(a.body.toString('utf8'));
  } catch {
    return [['problem body not JSON', 'unparsable']];
  }
  if (body?.correlationId !== correlationId)
    return [['problem correlationId differs from header', `${body?.correlationId} vs ${correlationId}`]];
  if (body.status !== a.status || typeof body.code !== 'string')
    return [['problem fields wrong', `status ${body.status}, code ${body.code}`]];
  return [];
}

interface Example {
  detail: string;
  c: FuzzCase;
  a: Answer;
  count: number;
}

/**
 * Failures grouped by kind (one cause, usually), then by route and status; the first
 * example of each group is kept. The report shows every kind, with a few examples of
 * each, so that one frequent failure does not hide a rare one.
 */
export class Failures {
  private readonly kinds = new Map<string, Map<string, Example>>();
  total = 0;

  add(c: FuzzCase, a: Answer, kind: string, detail: string): void {
    this.total++;
    const groups = this.kinds.get(kind) ?? new Map<string, Example>();
    this.kinds.set(kind, groups);
    const key = `${c.route}|${a.status}`;
    const seen = groups.get(key);
    if (seen) seen.count++;
    else groups.set(key, { detail, c, a, count: 1 });
  }

  get distinct(): number {
    return [...this.kinds.values()].reduce((n, groups) => n + groups.size, 0);
  }

  report(seed: number, examplesPerKind = 3): string {
    const lines = [`${this.total} failing answers, ${this.distinct} distinct by route and status (replay with FUZZ_SEED=${seed}):`];
    for (const [kind, groups] of this.kinds) {
      const examples = [...groups.values()];
      lines.push(`[${kind}] ${examples.reduce((n, e) => n + e.count, 0)} answers on ${examples.length} route/status pairs, e.g.:`);
      for (const e of examples.slice(0, examplesPerKind)) {
        const path = e.c.path.length > 120 ? `${e.c.path.slice(0, 120)}…` : e.c.path;
        const head = e.a.body.subarray(0, 200).toString('utf8').replace(/\s+/g, ' ');
        lines.push(
          `  - case #${e.c.n} ${e.c.method} ${path} (route ${e.c.route}; ${e.c.input}) -> ${e.a.status || 'nothing'}: ${e.detail} (x${e.count})`,
        );
        if (head) lines.push(`      body: ${head}`);
      }
    }
    return lines.join('\n');
  }
}
