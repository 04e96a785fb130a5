// Grounding a chat answer in the tenant's documents: the question goes to the os
// area's retrieval (handed over by the composition root), the passages found go into
// the prompt as numbered sources inside a token budget, and the answer reports them
// as rag_snippets. Ids of another tenant come back as retrieval's 404, before any
// engine is called; a request without a grounding field never reaches this file.
import { textOf, type ChatMessage } from '../../../engines/types.js';
import type { RagScope, RagStatus, Retrieve, RetrievalResult, Snippet } from '../../grounding.js';
import { countPromptTokens, countTextTokens } from '../tokens/count.js';

export interface GroundingDeps {
  retrieve: Retrieve;
  /** The context window assumed for models (GATEWAY_RAG_CONTEXT_TOKENS): sources fill what the conversation and the answer leave; the persisted chat trims its history to it. */
  contextTokens: number;
}

export interface GroundingFields {
  workspaceIds?: string[];
  collectionIds?: string[];
  ragScopes?: RagScope[];
}

/** What an answer says about its grounding (spec 2.6's rag_* fields, 6.1's metadata frame). */
export interface Grounding {
  snippets: Snippet[] | null;
  active: boolean;
  status: RagStatus;
}

export const UNGROUNDED: Grounding = { snippets: null, active: false, status: 'inactive' };

/** Whether the request asks for grounding at all: any grounding field, even an empty list. */
export const wantsGrounding = (fields: GroundingFields): boolean =>
  fields.workspaceIds !== undefined || fields.collectionIds !== undefined || fields.ragScopes !== undefined;

// Room for the instructions and the numbering, on top of the sources themselves.
const INSTRUCTION_TOKENS = 120;
// Sources never take more than this, however large the context: long prompts slow every model down.
const MAX_SOURCE_TOKENS = 6000;
/** The most a grounded prompt's sources take, instructions included: what a caller keeping a long history reserves. */
export const MAX_GROUNDING_TOKENS = MAX_SOURCE_TOKENS + INSTRUCTION_TOKENS;

/**
 * The tokens a kept history (the persisted chat, a thread) may take: the context less
 * the answer's max_tokens and, when grounded, room for the sources (half of what is
 * left, at most MAX_GROUNDING_TOKENS).
 */
export function historyBudget(contextTokens: number, maxTokens: number, grounded: boolean): number {
  const left = Math.max(0, contextTokens - maxTokens);
  return grounded ? left - Math.min(MAX_GROUNDING_TOKENS, Math.floor(left / 2)) : left;
}
// A source cut to fit keeps at least this much, or is left out.
const MIN_SOURCE_TOKENS = 48;

const INSTRUCTIONS =
  "Answer using the numbered sources below, which come from the user's own documents. " +
  'Cite every source you use by its number in square brackets, like [1] or [2][3]. ' +
  'If the sources do not contain the answer, say that the documents do not answer it instead of guessing.';

/**
 * Retrieves for the last user turn and returns the messages the engine should see
 * (the sources in the system message) with the grounding to report.
 */
export async function ground(
  deps: GroundingDeps,
  tenantId: string,
  fields: GroundingFields,
  messages: ChatMessage[],
  maxTokens: number,
): Promise<{ grounding: Grounding; messages: ChatMessage[] }> {
  const result = await retrieveFor(deps, tenantId, fields, lastUserTurn(messages));
  return groundWith(deps, result, messages, maxTokens);
}

/**
 * Retrieval alone, for `query`: throws retrieval's 404 for an id that is not the
 * tenant's. A caller that must check the scope before it stores anything (the
 * persisted chat) retrieves first and grounds later with groundWith.
 */
export function retrieveFor(deps: GroundingDeps, tenantId: string, fields: GroundingFields, query: string): Promise<RetrievalResult> {
  return deps.retrieve(tenantId, {
    query,
    ...(fields.workspaceIds ? { workspaceIds: fields.workspaceIds } : {}),
    ...(fields.collectionIds ? { collectionIds: fields.collectionIds } : {}),
    ...(fields.ragScopes ? { ragScopes: fields.ragScopes } : {}),
  });
}

/** What retrieval found, put into `messages` within what the context leaves beside them and the answer. */
export async function groundWith(
  deps: Pick<GroundingDeps, 'contextTokens'>,
  result: RetrievalResult,
  messages: ChatMessage[],
  maxTokens: number,
): Promise<{ grounding: Grounding; messages: ChatMessage[] }> {
  if (result.snippets.length === 0) return { grounding: { snippets: [], active: false, status: result.status }, messages };

  const budget = Math.min(MAX_SOURCE_TOKENS, deps.contextTokens - maxTokens - (await countPromptTokens(messages)) - INSTRUCTION_TOKENS);
  const used = await fitSources(result.snippets, budget);
  if (used.length === 0) return { grounding: { snippets: [], active: false, status: 'no_matches' }, messages };
  return { grounding: { snippets: used, active: true, status: 'active' }, messages: withSources(messages, used) };
}

function lastUserTurn(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return textOf(messages[i]!.content);
  return textOf(messages[messages.length - 1]!.content);
}

/** The snippets, best first, that fit the budget; the last one cut at a word if only part of it fits. */
async function fitSources(snippets: Snippet[], budget: number): Promise<Snippet[]> {
  const used: Snippet[] = [];
  let left = budget;
  for (const snippet of snippets) {
    const cost = (await countTextTokens(sourceText(snippet, used.length + 1))) + 2;
    if (cost <= left) {
      used.push(snippet);
      left -= cost;
      continue;
    }
    if (left >= MIN_SOURCE_TOKENS) {
      // Tokens are ~4 characters of English: cut near the budget, at a space.
      const keep = snippet.content.slice(0, Math.max(0, left * 4 - 200));
      const cut = keep.slice(0, Math.max(keep.lastIndexOf(' '), 0));
      if (cut) used.push({ ...snippet, content: `${cut} …` });
    }
    break;
  }
  return used;
}

function sourceText(snippet: Snippet, n: number): string {
  const where = [snippet.source.title, ...(snippet.source.headingPath ?? [])].join(' › ');
  const page = snippet.source.page !== undefined ? ` (page ${snippet.source.page})` : '';
  return `[${n}] ${where}${page}\n${snippet.content}`;
}

/** The sources go into the system message: one system message first is what every chat template handles. */
function withSources(messages: ChatMessage[], snippets: Snippet[]): ChatMessage[] {
  const sources = `${INSTRUCTIONS}\n\nSources:\n\n${snippets.map((s, i) => sourceText(s, i + 1)).join('\n\n')}`;
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${textOf(first.content)}\n\n${sources}` }, ...rest];
  return [{ role: 'system', content: sources }, ...messages];
}
