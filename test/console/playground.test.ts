// The playground in a real browser, against a fake OpenAI-compatible engine that streams
// its answer token by token: tenant A's admin grounds a question in a workspace, watches
// the answer grow, opens its numbered source, reloads the page and finds the conversation
// again (and in the conversations list); then stops a long answer midway and keeps what
// it had. The engine's recorded prompt shows the document's passage reached it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { eventually } from '../helpers/eventually.js';
import { type FakeEngine, startFakeOpenAI } from '../helpers/fake-engines/index.js';
import { keepScreenshot, openWalk } from './browser.js';
import { type ConsoleWorld, signIn, startConsoleWorld } from './console-gateway.js';

const MODEL = 'chat-model';
const WORKSPACE = 'Lighthouse archive';
const DOCUMENT = 'kestrel-point.md';
const FACT = 'The Kestrel Point lighthouse was first lit on 14 March 1887 by keeper Ada Lindqvist.';
const TEXT = `# Kestrel Point\n\n${FACT}\n\nIts lamp burned colza oil until 1921, when paraffin replaced it.\n`;
const QUESTION = 'When was the Kestrel Point lighthouse first lit?';
// Fourteen tokens, one every 80 ms: long enough that the page renders it in several steps.
const ANSWER = 'The Kestrel Point lighthouse was first lit on 14 March 1887, by keeper Ada Lindqvist [1].';
const LONG_ANSWER = 'The keepers wrote in the log every night, whatever the weather, and the log was kept for a century.';

/** The transcript's answers (the messages a screen reader hears politely), in order. */
const answers = (page: Page) => page.getByRole('list', { name: 'Conversation' }).locator('.msg-assistant');

/**
 * Records every text the last answer shows until it is complete (a MutationObserver in the
 * page, so no intermediate render is missed by polling); read them with `seenTexts`.
 */
async function watchAnswerTexts(page: Page): Promise<void> {
  // A string, not a function: the test runner's transpiler would add helpers the page lacks.
  await page.evaluate(`{
    const seen = [];
    window.seenTexts = seen;
    new MutationObserver(() => {
      const all = document.querySelectorAll('.chat-log .msg-assistant [aria-live="polite"]');
      const text = all[all.length - 1]?.textContent ?? '';
      if (text !== '' && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }`);
}
const seenTexts = (page: Page) => page.evaluate('window.seenTexts') as Promise<string[]>;

describe('console playground', () => {
  let cw: ConsoleWorld;
  let engine: FakeEngine;
  let documentId: string;

  const chatPrompts = () => engine.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body.messages as any[]);

  before(async () => {
    engine = await startFakeOpenAI({ models: [MODEL], reply: ANSWER, tokenDelayMs: 80 });
    cw = await startConsoleWorld({
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: engine.url, name: 'fake-0' }]),
      GATEWAY_LOCAL_ENGINE: 'off',
    });
    const { gw, world } = cw;
    const token = world.a.admin.token;
    const workspace = await gw.request('POST', '/api/os/workspaces', { token, json: { name: WORKSPACE } });
    assert.equal(workspace.status, 201, workspace.text);
    const uploaded = await gw.request('POST', `/api/os/workspaces/${workspace.body.id}/documents`, {
      token,
      json: { name: DOCUMENT, text: TEXT },
    });
    assert.equal(uploaded.status, 202, uploaded.text);
    documentId = uploaded.body.id;
    await eventually(
      `${DOCUMENT} ready`,
      async () => {
        const doc = (await gw.request('GET', `/api/os/documents/${documentId}`, { token })).body;
        assert.notEqual(doc.status, 'failed', doc.error);
        return doc.status === 'ready';
      },
      60_000,
    );
  });
  after(async () => {
    await cw?.close();
    await engine?.close();
  });

  it('streams a grounded answer with its citation, and reopens the conversation after a reload', async () => {
    const { world, origin } = cw;
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    await signIn(page, origin, world.a.admin, '/playground');
    await page.getByRole('heading', { name: 'Playground', exact: true }).waitFor();

    await page.locator('summary', { hasText: 'Grounding: none' }).click();
    await page.getByRole('group', { name: 'Ground answers in documents' }).getByRole('checkbox', { name: WORKSPACE }).check();
    await page.locator('summary', { hasText: 'Grounding: 1 selected' }).waitFor();

    await watchAnswerTexts(page);
    await page.getByLabel('Message').fill(QUESTION);
    await page.getByLabel('Message').press('Enter');

    // While it streams, Stop is offered and the answer is marked busy.
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    await page.waitForURL(/\/playground\/conv_/);
    const conversationId = decodeURIComponent(new URL(page.url()).pathname.slice('/playground/'.length));

    const answer = answers(page).last().locator('[aria-live="polite"]');
    await page.getByRole('status').getByText('The answer is complete.').waitFor();
    assert.equal(await answer.textContent(), ANSWER, 'the final text is what the engine sent');
    assert.equal(await answer.getAttribute('aria-busy'), 'false');
    assert.equal(await page.getByRole('button', { name: 'Stop' }).count(), 0, 'Stop goes once the answer is whole');

    // The answer grew on screen: several partial texts, each a beginning of the final one.
    const seen = await seenTexts(page);
    const partial = seen.filter((text) => text !== ANSWER);
    assert.ok(partial.length >= 2, `at least two partial texts before the whole answer, saw ${JSON.stringify(seen)}`);
    for (const text of seen) assert.ok(ANSWER.startsWith(text), `"${text}" is a beginning of the answer`);
    assert.equal(seen.at(-1), ANSWER);

    // The gold passage reached the engine.
    const prompts = chatPrompts();
    assert.equal(prompts.length, 1);
    assert.ok(
      prompts[0]!.some((m) => typeof m.content === 'string' && m.content.includes(FACT)),
      "the engine's prompt holds the document's fact",
    );
    assert.ok(prompts[0]!.some((m) => m.role === 'user' && m.content === QUESTION));

    // Its numbered source opens the passage.
    const source = page.getByRole('button', { name: `[1] ${DOCUMENT}` });
    await source.click();
    const dialog = page.getByRole('dialog', { name: `Source [1]: ${DOCUMENT}` });
    await dialog.waitFor();
    assert.ok((await dialog.locator('blockquote').textContent())?.includes(FACT), 'the dialog shows the passage');
    assert.equal(
      await dialog.getByRole('link', { name: 'Open the document' }).getAttribute('href'),
      `/documents/${encodeURIComponent(documentId)}`,
    );
    await keepScreenshot(page, 'playground-citation');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await source.evaluate((el) => el === document.activeElement), true, 'focus returns to the source button');
    await keepScreenshot(page, 'playground');

    // A reload reopens the conversation from the server, citation included.
    await page.reload();
    await page.getByText(`Signed in as ${world.a.admin.username}`).waitFor();
    assert.equal(new URL(page.url()).pathname, `/playground/${conversationId}`);
    const transcript = page.getByRole('list', { name: 'Conversation' });
    await transcript.locator('.msg-user').getByText(QUESTION, { exact: true }).waitFor();
    await answers(page).getByText(ANSWER, { exact: true }).waitFor();
    await page.getByRole('button', { name: `[1] ${DOCUMENT}` }).waitFor();
    await page.locator('.conversation-title', { hasText: QUESTION }).waitFor();

    // The conversations list has it, and continuing it lands back here.
    await page.getByRole('link', { name: 'All conversations' }).click();
    await page.getByRole('heading', { name: 'Conversations', exact: true }).waitFor();
    const titleLink = page.getByRole('rowheader').getByRole('link', { name: QUESTION });
    assert.equal(await titleLink.getAttribute('href'), `/playground/${encodeURIComponent(conversationId)}`);
    await titleLink.click();
    await page.waitForURL(`${origin}/playground/${conversationId}`);
    await answers(page).getByText(ANSWER, { exact: true }).waitFor();

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });

  it('stops a long answer midway and keeps its partial text, on screen and after a reload', async () => {
    const { world, origin } = cw;
    // Slow and long: minutes if left to finish, so only Stop ends it.
    engine.behaviour = { models: [MODEL], reply: LONG_ANSWER, repeat: 100, tokenDelayMs: 150 };
    const abortedBefore = engine.aborted();
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    await signIn(page, origin, world.a.admin, '/playground');
    await page.getByRole('heading', { name: 'Playground', exact: true }).waitFor();

    await page.getByLabel('Message').fill('Tell me everything the keepers wrote.');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = answers(page).last().locator('[aria-live="polite"]');
    // Some words have arrived (three or more), and the answer is still being written.
    await page.waitForFunction(() => {
      const all = document.querySelectorAll('.chat-log .msg-assistant [aria-live="polite"]');
      return (all[all.length - 1]?.textContent ?? '').trim().split(/\s+/).length >= 3;
    });
    assert.equal(await answer.getAttribute('aria-busy'), 'true');
    await page.getByRole('button', { name: 'Stop' }).click();

    await answers(page).last().getByText('Stopped before it finished.').waitFor();
    await page.getByRole('status').getByText('Stopped. The partial answer is kept.').waitFor();
    const kept = (await answer.textContent()) ?? '';
    const full = Array.from({ length: 100 }, () => LONG_ANSWER).join(' ');
    assert.ok(kept.trim().split(/\s+/).length >= 3, `the partial answer stays: "${kept}"`);
    assert.ok(full.startsWith(kept) && kept.length < full.length, 'a beginning of the answer, not all of it');
    assert.equal(await page.getByRole('button', { name: 'Stop' }).count(), 0);
    // Stop reached the engine: the gateway let go of its request.
    await eventually('the engine request to be aborted', () => engine.aborted() > abortedBefore, 10_000);

    // The server kept it as stopped, with what it had.
    await page.waitForURL(/\/playground\/conv_/);
    await page.reload();
    await page.getByText(`Signed in as ${world.a.admin.username}`).waitFor();
    await answers(page).last().getByText('Stopped before it finished.').waitFor();
    const stored = (await answers(page).last().locator('[aria-live="polite"]').textContent()) ?? '';
    assert.ok(stored.length > 0 && full.startsWith(stored), `the stored partial answer is a beginning of the answer: "${stored}"`);

    // The composer works again: a short answer completes in the same conversation.
    engine.behaviour = { models: [MODEL], reply: 'Short and done.' };
    await page.getByLabel('Message').fill('Just the first line, please.');
    await page.getByLabel('Message').press('Enter');
    await answers(page).last().getByText('Short and done.', { exact: true }).waitFor();

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });
});
