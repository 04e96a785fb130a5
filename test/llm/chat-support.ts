// Shared by the chat and pull tests: a gateway in front of fake engines, and an
// event-stream client on node:http that the tests can pause, read and cut off.
import http from 'node:http';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import type { FakeEngine } from '../helpers/fake-engines/index.js';

/** A gateway whose only compute nodes are `fakes` (the local engine off). */
export function gatewayOver(fakes: Pick<FakeEngine, 'kind' | 'url'>[], env: Record<string, string> = {}): Promise<TestGateway> {
  const nodes = fakes.map((f, i) => ({ engine: f.kind, url: f.url, name: `fake-${i}` }));
  return startGateway({ GATEWAY_NODES: JSON.stringify(nodes), GATEWAY_LOCAL_ENGINE: 'off', ...env });
}

/** One event-stream item: a `data:` payload, or a `:` comment. */
export type SseItem = { data: string } | { comment: string };

export interface OpenStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  res: http.IncomingMessage;
  /** Every complete item received so far, in order. */
  items: SseItem[];
  /** Body bytes received so far. */
  bytes(): number;
  /** Resolves once `predicate` holds for what was received (fails after `timeoutMs`, or when the stream ends first). */
  until(predicate: (items: SseItem[]) => boolean, timeoutMs?: number): Promise<SseItem[]>;
  /** Resolves with every item when the response ends. */
  end(timeoutMs?: number): Promise<SseItem[]>;
  /** Cuts the connection, as a client that goes away. */
  destroy(): void;
}

/** A POST whose response has not been waited for: cut it off with destroy(). */
export interface PendingRequest {
  req: http.ClientRequest;
  response: Promise<http.IncomingMessage>;
  destroy(): void;
}

export function post(gw: Pick<TestGateway, 'url'>, path: string, json: unknown, headers: Record<string, string>): PendingRequest {
  const { port } = new URL(gw.url);
  const body = JSON.stringify(json);
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path,
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
  });
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.on('response', resolve);
    req.on('error', reject);
  });
  response.catch(() => undefined); // a destroyed request rejects; tests that destroy do not wait on it
  req.end(body);
  return { req, response, destroy: () => req.destroy() };
}

/** POSTs `json` and resolves once the status line and headers are in (fails after `timeoutMs`); the body is parsed as it comes. */
export async function openStream(
  gw: TestGateway,
  path: string,
  json: unknown,
  headers: Record<string, string>,
  timeoutMs = 10_000,
): Promise<OpenStream> {
  const pending = post(gw, path, json, headers);
  let timer: NodeJS.Timeout | undefined;
  const res = await Promise.race([
    pending.response,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        pending.destroy();
        reject(new Error(`no response headers for POST ${path} within ${timeoutMs} ms`));
      }, timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  const items: SseItem[] = [];
  let buffer = '';
  let bytes = 0;
  let ended = false;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    bytes += Buffer.byteLength(chunk);
    buffer += chunk;
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      items.push(...parseSse(buffer.slice(0, at + 2)));
      buffer = buffer.slice(at + 2);
    }
    notify();
  });
  const finish = () => {
    ended = true;
    notify();
  };
  res.on('end', finish);
  res.on('close', finish);
  res.on('error', finish);
  const describe = () => JSON.stringify(items.slice(-8)).slice(0, 2000);
  const wait = (done: () => boolean, failWhenEnded: boolean, what: string, timeoutMs: number) =>
    new Promise<SseItem[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; last items: ${describe()}`));
      }, timeoutMs);
      function check() {
        if (done()) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(items);
        } else if (ended && failWhenEnded) {
          clearTimeout(timer);
          waiters.delete(check);
          reject(new Error(`stream ended before ${what}; last items: ${describe()}`));
        }
      }
      waiters.add(check);
      check();
    });
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    res,
    items,
    bytes: () => bytes,
    until: (predicate, timeoutMs = 5000) => wait(() => predicate(items), true, 'the expected frames', timeoutMs),
    end: (timeoutMs = 10_000) => wait(() => ended, false, 'the end of the stream', timeoutMs),
    destroy: pending.destroy,
  };
}

/** Splits event-stream text into items; an unfinished last event is left out. */
export function parseSse(text: string): SseItem[] {
  const events = text.split('\n\n');
  events.pop();
  const items: SseItem[] = [];
  for (const event of events) {
    for (const line of event.split('\n')) {
      if (line.startsWith('data: ')) items.push({ data: line.slice(6) });
      else if (line.startsWith(':')) items.push({ comment: line.slice(1).trim() });
    }
  }
  return items;
}

/** The JSON payloads of the data items, `[DONE]` kept as the string. */
export function payloads(items: SseItem[]): any[] {
  return items.filter((i): i is { data: string } => 'data' in i).map((i) => (i.data === '[DONE]' ? '[DONE]' : JSON.parse(i.data)));
}

export const deltasOf = (frames: any[]) =>
  frames
    .filter((f) => f !== '[DONE]' && f.object === 'chat.completion.chunk')
    .map((f) => f.choices[0]?.delta?.content ?? '')
    .join('');

/** Rows of usage_records for a tenant, after the recorder has flushed. */
export async function usageRows(gw: TestGateway, tenantId: string): Promise<any[]> {
  await gw.ctx.llm.usage.flush();
  return gw.ctx.db.query(`SELECT * FROM usage_records WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
}
