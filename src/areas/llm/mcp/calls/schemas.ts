// The audit record of one MCP tool call and the query of GET /api/llm/v1/mcp/calls.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../../schemas.js';

export const McpCallStatus = Type.Union([
  Type.Literal('ok'),
  Type.Literal('error'),
  Type.Literal('denied'),
  Type.Literal('timeout'),
  Type.Literal('cancelled'),
]);
export type McpCallStatus = Static<typeof McpCallStatus>;

export const McpCallRecord = Type.Object({
  id: Type.String(),
  at: Timestamp,
  /** The server's name; null when the name called matched no tool (status `denied`). */
  server: Type.Union([Type.String(), Type.Null()]),
  /** The tool's name on its server, or the name as called when it matched none. */
  tool: Type.String(),
  /** The API key that called, or */
  keyId: Type.Optional(Type.String()),
  /** the user. */
  userId: Type.Optional(Type.String()),
  /**
   * `ok`: a result; `error`: a tool's own failure (`isError`), an upstream error or one out
   * of reach; `denied`: an unknown or ungranted tool (no upstream reached); `timeout`: the
   * server's timeoutSeconds passed; `cancelled`: the client cancelled.
   */
  status: McpCallStatus,
  durationMs: Type.Integer(),
  /** SHA-256 (hex) of the arguments as JSON: compares calls without keeping their content. */
  argumentsSha256: Type.String(),
  argumentsBytes: Type.Integer(),
  /** The result's size as JSON; null when there was none. */
  resultBytes: Type.Union([Type.Integer(), Type.Null()]),
});
export type McpCallRecord = Static<typeof McpCallRecord>;

/** Strings on the wire (no coercion), checked by the service. */
export const McpCallQuery = Type.Object({
  from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 timestamp (inclusive).' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 timestamp (exclusive).' })),
  server: Type.Optional(Type.String({ maxLength: 32 })),
  tool: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Optional(Type.String({ maxLength: 10, description: 'Page size, 1 to 500 (default 100).' })),
  after: Type.Optional(Type.String({ maxLength: 64, description: 'The `next` of the previous page.' })),
});
export type McpCallQuery = Static<typeof McpCallQuery>;

export const McpCallPage = Type.Object({
  data: Type.Array(McpCallRecord),
  next: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page (`?after=`); null on the last.' }),
});
