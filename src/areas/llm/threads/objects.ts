// The threads API's objects as OpenAI's Assistants v2 shapes them (snake_case, unix
// seconds), built from the history store's rows: `thread` and `thread.message`. The
// grounding scope (`workspace_ids`, `collection_ids`) is the tenant's own extension.
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { Snippet } from '../../grounding.js';
import type { ConversationRow, ItemRow, StoredScope } from '../history/repository.js';

export const seconds = (date: Date | null | undefined): number | null => (date ? Math.floor(date.getTime() / 1000) : null);

const Metadata = Type.Record(Type.String(), Type.String());
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const Ids = Type.Array(Type.String());

export const ThreadObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread'),
  created_at: Type.Integer(),
  metadata: Metadata,
  tool_resources: Type.Object({}),
  workspace_ids: Ids,
  collection_ids: Ids,
});
export type ThreadObject = Static<typeof ThreadObject>;

/** A citation of a grounded answer: the `[n]` marker in the text and the document it cites. */
export const FileCitation = Type.Object({
  type: Type.Literal('file_citation'),
  text: Type.String(),
  start_index: Type.Integer(),
  end_index: Type.Integer(),
  file_citation: Type.Object({ file_id: Type.String() }),
});
export type FileCitation = Static<typeof FileCitation>;

export const TextPart = Type.Object({
  type: Type.Literal('text'),
  text: Type.Object({ value: Type.String(), annotations: Type.Array(FileCitation) }),
});

export const MessageObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread.message'),
  created_at: Type.Integer(),
  thread_id: Type.String(),
  status: Type.Union([Type.Literal('in_progress'), Type.Literal('incomplete'), Type.Literal('completed')]),
  incomplete_details: Type.Union([Type.Object({ reason: Type.String() }), Type.Null()]),
  completed_at: NullableInt,
  incomplete_at: NullableInt,
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Array(TextPart),
  assistant_id: Type.Union([Type.String(), Type.Null()]),
  run_id: Type.Union([Type.String(), Type.Null()]),
  attachments: Type.Array(Type.Object({})),
  metadata: Metadata,
});
export type MessageObject = Static<typeof MessageObject>;

const scopeOf = (scope: StoredScope | null) => ({ workspace_ids: scope?.workspaceIds ?? [], collection_ids: scope?.collectionIds ?? [] });

export function threadObject(row: ConversationRow): ThreadObject {
  return {
    id: row.id,
    object: 'thread',
    created_at: seconds(row.created_at)!,
    metadata: row.metadata,
    tool_resources: {},
    ...scopeOf(row.grounding),
  };
}

export function messageObject(row: ItemRow): MessageObject {
  const grounding = row.grounding as { snippets?: Snippet[] | null } | null;
  return {
    id: row.id,
    object: 'thread.message',
    created_at: seconds(row.created_at)!,
    thread_id: row.conversation_id,
    status: row.status,
    incomplete_details: row.status === 'incomplete' ? { reason: row.incomplete_reason ?? 'run_failed' } : null,
    completed_at: row.status === 'completed' ? seconds(row.completed_at) : null,
    incomplete_at: row.status === 'incomplete' ? seconds(row.completed_at) : null,
    // The store also holds system items (a Responses-API instruction, later); threads show user and assistant turns.
    role: row.role === 'user' ? 'user' : 'assistant',
    content: [{ type: 'text', text: { value: row.content, annotations: citationsIn(row.content, grounding?.snippets ?? null) } }],
    assistant_id: row.assistant_id,
    run_id: row.run_id,
    attachments: [],
    metadata: row.metadata,
  };
}

/**
 * The `[n]` markers of a grounded answer as file_citation annotations: n counts the
 * sources as grounding numbered them in the prompt (1-based), `file_id` is the cited
 * document. A marker without such a source is left as text.
 */
export function citationsIn(content: string, snippets: readonly Snippet[] | null): FileCitation[] {
  if (!snippets || snippets.length === 0) return [];
  const citations: FileCitation[] = [];
  for (const match of content.matchAll(/\[(\d{1,3})\]/g)) {
    const snippet = snippets[Number(match[1]) - 1];
    if (!snippet) continue;
    citations.push({
      type: 'file_citation',
      text: match[0],
      start_index: match.index,
      end_index: match.index + match[0].length,
      file_citation: { file_id: snippet.documentId },
    });
  }
  return citations;
}
