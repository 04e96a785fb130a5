// Runs and their steps as OpenAI's Assistants v2 shapes them. A run here has one
// step, the creation of its assistant message (no tools yet), whose id is derived
// from the run's, so steps need no table of their own.
import { Type, type Static } from '@fastify/type-provider-typebox';
import type { RunRow } from '../runs/repository.js';
import { seconds } from '../threads/objects.js';

const Metadata = Type.Record(Type.String(), Type.String());
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const Usage = Type.Union([
  Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }),
  Type.Null(),
]);
const LastError = Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]);
export const RunStatus = Type.Union([
  Type.Literal('queued'),
  Type.Literal('in_progress'),
  Type.Literal('completed'),
  Type.Literal('incomplete'),
  Type.Literal('failed'),
  Type.Literal('cancelling'),
  Type.Literal('cancelled'),
  Type.Literal('expired'),
]);

export const RunObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread.run'),
  created_at: Type.Integer(),
  thread_id: Type.String(),
  assistant_id: Type.Union([Type.String(), Type.Null()]),
  status: RunStatus,
  required_action: Type.Null(),
  last_error: LastError,
  expires_at: NullableInt,
  started_at: NullableInt,
  cancelled_at: NullableInt,
  failed_at: NullableInt,
  completed_at: NullableInt,
  incomplete_details: Type.Union([Type.Object({ reason: Type.String() }), Type.Null()]),
  model: Type.String(),
  instructions: Type.Union([Type.String(), Type.Null()]),
  tools: Type.Array(Type.Object({})),
  metadata: Metadata,
  usage: Usage,
  temperature: Type.Union([Type.Number(), Type.Null()]),
  top_p: Type.Null(),
  max_prompt_tokens: Type.Null(),
  max_completion_tokens: NullableInt,
  truncation_strategy: Type.Object({ type: Type.Literal('auto'), last_messages: Type.Null() }),
  response_format: Type.Literal('auto'),
  tool_choice: Type.Literal('none'),
  parallel_tool_calls: Type.Boolean(),
  workspace_ids: Type.Array(Type.String()),
  collection_ids: Type.Array(Type.String()),
});
export type RunObject = Static<typeof RunObject>;

export const StepObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread.run.step'),
  created_at: Type.Integer(),
  run_id: Type.String(),
  assistant_id: Type.Union([Type.String(), Type.Null()]),
  thread_id: Type.String(),
  type: Type.Literal('message_creation'),
  status: Type.Union([
    Type.Literal('in_progress'),
    Type.Literal('cancelled'),
    Type.Literal('failed'),
    Type.Literal('completed'),
    Type.Literal('expired'),
  ]),
  cancelled_at: NullableInt,
  completed_at: NullableInt,
  expired_at: NullableInt,
  failed_at: NullableInt,
  last_error: LastError,
  step_details: Type.Object({
    type: Type.Literal('message_creation'),
    message_creation: Type.Object({ message_id: Type.String() }),
  }),
  usage: Usage,
  metadata: Metadata,
});
export type StepObject = Static<typeof StepObject>;

export function runObject(row: RunRow): RunObject {
  return {
    id: row.id,
    object: 'thread.run',
    created_at: seconds(row.created_at)!,
    thread_id: row.conversation_id,
    assistant_id: row.assistant_id,
    status: row.status,
    required_action: null,
    last_error: row.last_error,
    expires_at: ['queued', 'in_progress', 'cancelling'].includes(row.status) ? seconds(row.expires_at) : null,
    started_at: seconds(row.started_at),
    cancelled_at: seconds(row.cancelled_at),
    failed_at: seconds(row.failed_at),
    completed_at: seconds(row.completed_at),
    incomplete_details: row.incomplete_details,
    model: row.model,
    instructions: row.instructions,
    tools: [],
    metadata: row.metadata,
    usage: row.status === 'queued' || row.status === 'in_progress' ? null : row.usage,
    temperature: row.params.temperature ?? null,
    top_p: null,
    max_prompt_tokens: null,
    max_completion_tokens: row.params.max_tokens ?? null,
    truncation_strategy: { type: 'auto', last_messages: null },
    response_format: 'auto',
    tool_choice: 'none',
    parallel_tool_calls: false,
    workspace_ids: row.params.grounding?.workspaceIds ?? [],
    collection_ids: row.params.grounding?.collectionIds ?? [],
  };
}

/** The run's one step (undefined before its message exists). */
export function stepObject(row: RunRow): StepObject | undefined {
  if (!row.message_id) return undefined;
  const status = STEP_STATUS[row.status];
  return {
    id: stepIdOf(row.id),
    object: 'thread.run.step',
    created_at: seconds(row.started_at ?? row.created_at)!,
    run_id: row.id,
    assistant_id: row.assistant_id,
    thread_id: row.conversation_id,
    type: 'message_creation',
    status,
    cancelled_at: status === 'cancelled' ? seconds(row.cancelled_at) : null,
    completed_at: status === 'completed' ? seconds(row.completed_at) : null,
    expired_at: status === 'expired' ? seconds(row.completed_at ?? row.expires_at) : null,
    failed_at: status === 'failed' ? seconds(row.failed_at) : null,
    last_error: status === 'failed' ? row.last_error : null,
    step_details: { type: 'message_creation', message_creation: { message_id: row.message_id } },
    usage: status === 'in_progress' ? null : row.usage,
    metadata: {},
  };
}

const STEP_STATUS: Record<RunRow['status'], StepObject['status']> = {
  queued: 'in_progress',
  in_progress: 'in_progress',
  cancelling: 'in_progress',
  completed: 'completed',
  // Stopped at max_tokens: the message was created, cut short (the message says so).
  incomplete: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'expired',
};

/** `step_` + the run id's time and randomness: one step per run, found from either id. */
export const stepIdOf = (runId: string) => `step_${runId.slice('run_'.length)}`;
