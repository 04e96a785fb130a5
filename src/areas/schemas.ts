// Schemas every area shares: the problem+json body and common error responses.
import { Type, type TSchema } from '@fastify/type-provider-typebox';

export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  code: Type.String(),
  correlationId: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  // OpenAI's error member, on the /api/llm/v1 surface only (see gateway/error-handler.ts).
  error: Type.Optional(
    Type.Object({ message: Type.String(), type: Type.String(), param: Type.Union([Type.String(), Type.Null()]), code: Type.String() }),
  ),
});

/** Response schemas for the listed error statuses, all the one problem shape. */
export function problems(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, Problem]));
}

/** A non-blank string; surrounding white space is not stripped, just not allowed to be all there is. */
export const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '\\S' });

export const Timestamp = Type.String({ format: 'date-time' });
