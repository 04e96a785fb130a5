// Shared by the chat and pull tests: a gateway in front of fake engines, and an
// event-stream client on node:http that the tests can pause, read and cut off.
import http from 'node:http';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import type { FakeEngine } from '../helpers/fake-engines.js';

/** A gateway whose only compute nodes are `fakes` (the local engine off). */
export function gatewayOver(fakes: FakeEngine[], env: Record<string, string> = {}): Promise<TestGateway> {
  const nodes = fakes.map((f, i) => ({ engine: f.kind, url: f.url, name: `fake-${i}` }));
  return startGateway({ GATEWAY_NODES: JSON.stringify(nodes), GATEWAY_LOCAL_ENGINE: 'off', ...env });
}

/** One event-stream item: a `data:` payload, or a `:` comment. */
export type SseItem = { data: string } | { comment: string };

export interface OpenStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  res: http.IncomingMessage;
  /** Everything received so far, parsed. */
  items(): SseItem[];
  /** Raw text received so far. */
  text(): string;
  /** Resolves once `predicate` holds for what was received (fails after `timeoutMs`). */
  until(predicate: (items: SseItem[]) => boolean, timeoutMs?: number): Promise<SseItem[]>;
  /** Resolves with every item when the response ends. */
  end(timeoutMs?: number): Promise<SseItem[]>;
  /** Cuts the connection, as a client that goes away. */
  destroy(): void;
}

/** POSTs `json` and resolves once the status line and headers are in; the body is read as it comes. */
export function openStream(gw: TestGateway, path: string, json: unknown, headers: Record<string, string>): Promise<OpenStream> {
  const { port } = new URL(gw.url);
  const body = JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        let text = '';
        let ended = false;
        const waiters = new Set<() => void>();
        const notify = () => waiters.forEach((w) => w());
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          notify();
        });
        res.on('end', () => {
          ended = true;
          notify();
        });
        res.on('close', () => {
          ended = true;
          notify();
        });
        const items = () => parseSse(text);
        const until = (predicate: (items: SseItem[]) => boolean, timeoutMs = 5000) =>
          new Promise<SseItem[]>((ok, fail) => {
            const check = () => {
              const now = items();
              if (predicate(now)) {
                done();
                ok(now);
              } else if (ended) {
                done();
                fail(new Error(`stream ended before the expected frames; got: ${text.slice(0, 2000)}`));
              }
            };
            const timer = setTimeout(() => {
              done();
              fail(new Error(`timed out waiting for frames; got: ${text.slice(0, 2000)}`));
            }, timeoutMs);
            const done = () => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
            check();
          });
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          res,
          items,
          text: () => text,
          until,
          end: (timeoutMs = 10_000) =>
            new Promise<SseItem[]>((ok, fail) => {
              if (ended) return ok(items());
              const timer = setTimeout(() => fail(new Error(`stream did not end in time; got: ${text.slice(-2000)}`)), timeoutMs);
              const check = () => {
                if (!ended) return;
                clearTimeout(timer);
                waiters.delete(check);
                ok(items());
              };
              waiters.add(check);
            }),
          destroy: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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

/** Polls `check` every 20 ms until it is true, or fails after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Rows of usage_records for a tenant, after the recorder has flushed. */
export async function usageRows(gw: TestGateway, tenantId: string): Promise<any[]> {
  await gw.ctx.llm.usage.flush();
  return gw.ctx.db.query(`SELECT * FROM usage_records WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]);
}
