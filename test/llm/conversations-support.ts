// Shared by the persisted chat's tests (conversations*.test.ts): the routes, and the
// store's rows as the tests count and read them.
import type { TestGateway } from '../helpers/gateway.js';
import type { FakeEngine } from '../helpers/fake-engines/index.js';

export const CHAT = '/api/llm/v1/chat';
export const CONVERSATIONS = '/api/llm/v1/conversations';

/** Rows of the history store, all tenants together: a refused request must change none of them. */
export async function storeRows(gw: TestGateway): Promise<{ conversations: number; items: number; runs: number }> {
  const [row] = await gw.ctx.db.query<{ conversations: string; items: string; runs: string }>(
    `SELECT (SELECT count(*) FROM conversations) AS conversations,
            (SELECT count(*) FROM conversation_items) AS items,
            (SELECT count(*) FROM runs) AS runs`,
  );
  return { conversations: Number(row!.conversations), items: Number(row!.items), runs: Number(row!.runs) };
}

/** A conversation's stored items, oldest first, read straight from the store. */
export async function storedItems(gw: TestGateway, conversationId: string): Promise<any[]> {
  return gw.ctx.db.query('SELECT * FROM conversation_items WHERE conversation_id = $1 ORDER BY position', [conversationId]);
}

export async function storedRun(gw: TestGateway, runId: string): Promise<any> {
  const [row] = await gw.ctx.db.query('SELECT * FROM runs WHERE id = $1', [runId]);
  return row;
}

/** The messages of the chat requests `fake` received, oldest request first. */
export const enginePrompts = (fake: FakeEngine): { role: string; content: string }[][] =>
  fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body.messages);
