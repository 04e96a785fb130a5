// The endpoint reads and checks each POST body itself, before the SDK sees it: the
// API's JSON parser answers problem+json, and the SDK's transport would accept a batch
// and read an unbounded depth. What it refuses is answered as JSON-RPC, as an MCP
// client expects.
import type { IncomingMessage } from 'node:http';
import { argumentsRefusal, MAX_MESSAGE_DEPTH, nestingDepth } from './message-limits.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
/** What the SDK answers for refusals at the HTTP level (wrong method, media type). */
export const SERVER_ERROR = -32000;

export type JsonRpcId = string | number | null;
export type JsonRpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

/** An answer the endpoint gives without the SDK: HTTP status and the JSON-RPC error body. */
export class Refusal {
  readonly body: { jsonrpc: '2.0'; id: JsonRpcId; error: { code: number; message: string } };
  /** A tools/call refused for its arguments: still a call, so it is audited (as `denied`). */
  refusedCall?: { name: string; arguments: unknown };
  constructor(
    readonly status: number,
    code: number,
    message: string,
    id: JsonRpcId = null,
  ) {
    this.body = { jsonrpc: '2.0', id, error: { code, message } };
  }
}

export const refusal = (status: number, code: number, message: string, id: JsonRpcId = null) => new Refusal(status, code, message, id);

/** The message's id when it is a usable one (an answer to it must carry it), else null. */
export const idOf = (message: JsonRpcMessage): JsonRpcId =>
  typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;

/** The body's bytes, or a refusal when there are more than `limit` (the stream is then left unread). */
export async function readBody(raw: IncomingMessage, limit: number): Promise<Buffer | Refusal> {
  const tooLarge = refusal(413, INVALID_REQUEST, `The message is larger than ${limit} bytes.`);
  if (Number(raw.headers['content-length'] ?? 0) > limit) return tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of raw as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return tooLarge;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The one JSON-RPC message a POST carries, or why it is refused. */
export function parseMessage(bytes: Buffer): JsonRpcMessage | Refusal {
  let parsed: unknown;
  try {
    // Plain JSON.parse: a `__proto__` key becomes an own property, never the prototype,
    // and tool arguments must reach the upstream as the client wrote them.
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return refusal(400, PARSE_ERROR, 'Parse error: the body is not JSON.');
  }
  if (Array.isArray(parsed)) return refusal(400, INVALID_REQUEST, 'Batches (a JSON array) are not accepted: send one message per POST.');
  if (parsed === null || typeof parsed !== 'object') return refusal(400, INVALID_REQUEST, 'The body is not a JSON-RPC message.');
  const message = parsed as JsonRpcMessage;
  if (nestingDepth(message, MAX_MESSAGE_DEPTH) > MAX_MESSAGE_DEPTH)
    return refusal(400, INVALID_REQUEST, `The message is nested deeper than ${MAX_MESSAGE_DEPTH} levels.`, idOf(message));
  if (message.method === 'tools/call') {
    const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
    const why = argumentsRefusal(params?.arguments);
    if (why) {
      // In-band (HTTP 200), as any request's error: both eras' clients read it as the call's answer.
      const refused = refusal(200, INVALID_PARAMS, why, idOf(message));
      refused.refusedCall = { name: typeof params?.name === 'string' ? params.name.slice(0, 200) : '', arguments: params?.arguments };
      return refused;
    }
  }
  return message;
}
