// What the model sees of a long conversation (conversations/turn.ts, history/trim.ts):
// against a small context (GATEWAY_RAG_CONTEXT_TOKENS=512), the newest turns that fit
// what the context leaves after max_tokens, oldest dropped first, the newest turn kept
// even alone over the budget; grounding keeps room for its sources. The stored
// conversation itself is never trimmed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { countTextTokens } from '../../src/areas/llm/tokens/count.js';
import { MESSAGE_OVERHEAD_TOKENS } from '../../src/areas/llm/history/trim.js';
import { gatewayOver } from './chat-support.js';
import { CHAT, CONVERSATIONS, enginePrompts } from './conversations-support.js';

const CONTEXT = 512;
const MAX_TOKENS = 100;
const WORDS = 'river stone lantern orchard meadow harbor willow canyon ember falcon prairie glacier'.split(' ');

/** A message of about `words` words, told apart by its number. */
const turnText = (n: number, words = 36) =>
  `Turn ${n}: ${Array.from({ length: words }, (_, i) => WORDS[(i * 7 + n) % WORDS.length]).join(' ')}`;

const costOf = async (messages: { content: string }[]) => {
  let tokens = 0;
  for (const m of messages) tokens += (await countTextTokens(m.content)) + MESSAGE_OVERHEAD_TOKENS;
  return tokens;
};

describe('persisted chat: the history the model sees', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;

  const chat = (json: Record<string, unknown>) =>
    gw.request('POST', CHAT, { token: world.a.member.token, json: { model: 'ctx-model', max_tokens: MAX_TOKENS, ...json } });

  /** A conversation of `turns` turns; returns its id. */
  async function conversationOf(turns: number): Promise<string> {
    let conversationId: string | undefined;
    for (let n = 1; n <= turns; n++) {
      const response = await chat({ message: turnText(n), ...(conversationId ? { conversationId } : {}) });
      assert.equal(response.status, 200, response.text);
      conversationId = response.body.conversationId;
    }
    return conversationId!;
  }

  async function storedMessages(conversationId: string) {
    const read = await gw.request('GET', `${CONVERSATIONS}/${conversationId}`, { token: world.a.member.token });
    return read.body.messages.data.map((m: any) => ({ role: m.role, content: m.content }));
  }

  before(async () => {
    fake = await startFakeOpenAI({ models: ['ctx-model'] });
    gw = await gatewayOver([fake], { GATEWAY_RAG_CONTEXT_TOKENS: String(CONTEXT) });
    world = await seedWorld(gw, 'conv-ctx');
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('sends the newest turns that fit the context less max_tokens, dropping the oldest first', async () => {
    const conversationId = await conversationOf(8);
    const seen = enginePrompts(fake).at(-1)!;
    const stored = await storedMessages(conversationId);
    assert.equal(stored.length, 16, 'the stored conversation is whole');
    // The engine saw the newest stored messages (all but the answer being generated), in order.
    const history = stored.slice(0, -1);
    assert.deepEqual(seen, history.slice(history.length - seen.length));
    assert.deepEqual(seen.at(-1), { role: 'user', content: turnText(8) });
    assert.ok(!seen.some((m) => m.content.includes('Turn 1:')), 'the oldest turn is dropped');
    assert.ok(seen.length >= 3 && seen.length < history.length, `saw ${seen.length} of ${history.length}`);
    // As many as fit: within the budget, and one older message more would not be.
    const budget = CONTEXT - MAX_TOKENS;
    assert.ok((await costOf(seen)) <= budget);
    assert.ok((await costOf(history.slice(history.length - seen.length - 1))) > budget);
  });

  it('a larger max_tokens leaves room for less history', async () => {
    const conversationId = await conversationOf(5);
    const small = enginePrompts(fake).at(-1)!.length;
    const response = await chat({ message: turnText(6), conversationId, max_tokens: 350 });
    assert.equal(response.status, 200, response.text);
    const seen = enginePrompts(fake).at(-1)!;
    assert.ok(seen.length < small, `${seen.length} messages with max_tokens 350, ${small} with ${MAX_TOKENS}`);
    const history = (await storedMessages(conversationId)).slice(0, -1);
    assert.deepEqual(seen, history.slice(history.length - seen.length));
    assert.ok((await costOf(seen)) <= CONTEXT - 350);
    assert.ok((await costOf(history.slice(history.length - seen.length - 1))) > CONTEXT - 350);
  });

  it('always sends the newest turn, even alone over the budget', async () => {
    const conversationId = await conversationOf(2);
    const long = turnText(3, 700);
    assert.ok((await countTextTokens(long)) > CONTEXT);
    const response = await chat({ message: long, conversationId });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(enginePrompts(fake).at(-1), [{ role: 'user', content: long }]);
  });

  it('keeps room for sources when grounding is asked: half of what the context leaves', async () => {
    const workspace = await gw.request('POST', '/api/os/workspaces', { apiKey: world.a.key.key, json: { name: 'Empty' } });
    assert.equal(workspace.status, 201, workspace.text);
    const conversationId = await conversationOf(6);
    const ungrounded = enginePrompts(fake).at(-1)!;
    const response = await chat({ message: turnText(7), conversationId, workspaceIds: [workspace.body.id] });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.rag_status, 'no_documents');
    const grounded = enginePrompts(fake).at(-1)!;
    const budget = CONTEXT - MAX_TOKENS - Math.floor((CONTEXT - MAX_TOKENS) / 2);
    assert.ok((await costOf(grounded)) <= budget, 'the history kept within half');
    assert.ok(grounded.length < ungrounded.length, `${grounded.length} messages grounded, ${ungrounded.length} not`);
    assert.deepEqual(grounded.at(-1), { role: 'user', content: turnText(7) });
  });
});
