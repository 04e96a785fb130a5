// The tenant usage report on the wire: its query and its answer. The numbers come
// from another area (the llm area keeps usage_records); UsageSource says what this
// feature needs of it, and the composition root says who provides it.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../schemas.js';

const GroupBy = Type.Union([Type.Literal('key'), Type.Literal('model'), Type.Literal('day')]);
export type UsageGroupBy = Static<typeof GroupBy>;
/** The endpoints usage is recorded for (src/areas/llm: chat/call.ts, conversations, thread-runs, responses, embeddings, rerank, completions). */
const Endpoint = Type.Union(
  ['chat/completions', 'chat', 'threads', 'responses', 'embeddings', 'rerank', 'completions'].map((endpoint) => Type.Literal(endpoint)),
);

export const UsageQuery = Type.Object({
  from: Type.Optional(
    Type.String({ maxLength: 40, description: 'ISO 8601 timestamp or UTC date (inclusive); default: 30 days before `to`.' }),
  ),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 timestamp or UTC date (exclusive); default: now.' })),
  groupBy: Type.Optional(GroupBy),
  endpoint: Type.Optional(Endpoint),
});
export type UsageQuery = Static<typeof UsageQuery>;

const Count = Type.Integer({ minimum: 0 });
/** One group: the fields of its kind (`day`; `model`; `principalKind` and `principalId`, with the key's name and masked key where it still exists), then its sums. */
export const UsageGroupRecord = Type.Object({
  day: Type.Optional(Type.String({ description: 'YYYY-MM-DD, a UTC day.' })),
  model: Type.Optional(Type.String()),
  principalKind: Type.Optional(Type.Union([Type.Literal('apiKey'), Type.Literal('user')])),
  principalId: Type.Optional(Type.String()),
  keyName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  maskedKey: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  requests: Count,
  promptTokens: Count,
  completionTokens: Count,
  totalTokens: Count,
  /** Requests whose status was not ok (engine errors, unavailable, client gone…). */
  errors: Count,
});
export type UsageGroupRecord = Static<typeof UsageGroupRecord>;

export const UsageReport = Type.Object({
  data: Type.Array(UsageGroupRecord),
  from: Timestamp,
  to: Timestamp,
  groupBy: GroupBy,
  endpoint: Type.Optional(Type.String()),
  /** More groups than the report holds: the smallest were left out. */
  truncated: Type.Boolean(),
});
export type UsageReport = Static<typeof UsageReport>;

export type { UsageSource } from '../../usage.js';
