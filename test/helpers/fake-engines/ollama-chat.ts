// The Ollama fake's /api/chat: text answers (one JSON answer, or NDJSON frames),
// tool calls (the `toolCalls` knob, when the request offers tools and does not end
// with a tool result), JSON answers for `format` ("json" or a schema), logprobs
// when asked, and the 400s a real Ollama gives for bodies its Go types refuse.
import { createHash } from 'node:crypto';
import { beforeHeaders, die, endApart, pause, write, type Exchange } from './server.js';
import { modelsOf, promptTokens, replyTokens, wordCount } from './replies.js';

function ollamaError(x: Exchange, status: number, message: string): void {
  if (x.signal.aborted) return;
  const text = JSON.stringify({ error: message });
  x.res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  x.res.end(text);
}

/** What Ollama's JSON decoding refuses in messages (api.Message), as its 400 says it; undefined when they read. */
function badMessages(messages: any[]): string | undefined {
  for (const m of messages) {
    if (typeof m?.role !== 'string' || (m.content !== undefined && typeof m.content !== 'string'))
      return 'json: cannot unmarshal into Go struct field ChatRequest.messages of type api.Message';
    if (m.images !== undefined && !(Array.isArray(m.images) && m.images.every((i: unknown) => typeof i === 'string')))
      return 'illegal base64 data at input byte 0';
    for (const call of m.tool_calls ?? []) {
      const args = call?.function?.arguments;
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        return 'json: cannot unmarshal string into Go struct field ToolCallFunction.messages.tool_calls.function.arguments';
    }
  }
  return undefined;
}

/** A value that satisfies `schema` as far as the fake needs: required properties only, first enum values. */
export function exampleOf(schema: any): unknown {
  if (typeof schema !== 'object' || schema === null) return 'fake';
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t: unknown) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required: unknown[] = Array.isArray(schema.required) ? schema.required : [];
      for (const name of required) if (typeof name === 'string') out[name] = exampleOf(schema.properties?.[name]);
      return out;
    }
    case 'array':
      return schema.minItems > 0 ? [exampleOf(schema.items)] : [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return 'fake';
  }
}

/** Deterministic ids in Ollama's own form (`call_` and 8 lowercase letters or digits). */
function callId(name: string, i: number): string {
  return `call_${createHash('sha256').update(`${name}:${i}`).digest('hex').slice(0, 8)}`;
}

function logprobsFor(token: string, top: number): object {
  const bytes = [...Buffer.from(token)];
  const alternatives = [
    { token, logprob: -0.25, bytes },
    { token: ' fake', logprob: -2.5, bytes: [...Buffer.from(' fake')] },
  ];
  return { token, logprob: -0.25, bytes, ...(top > 0 ? { top_logprobs: alternatives.slice(0, top) } : {}) };
}

export async function ollamaChat(x: Exchange): Promise<void> {
  x.fake.countChat(x);
  const b = x.fake.behaviour;
  if (!(await beforeHeaders(x))) return;
  if (b.status !== undefined) return ollamaError(x, b.status, `fake upstream answered ${b.status}`);
  const body = x.body;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) return ollamaError(x, 400, 'messages is required');
  const refused = badMessages(body.messages);
  if (refused !== undefined) return ollamaError(x, 400, refused);
  const topLogprobs = body.top_logprobs ?? 0;
  if (typeof topLogprobs !== 'number' || topLogprobs < 0 || topLogprobs > 20)
    return ollamaError(x, 400, 'top_logprobs must be between 0 and 20');
  if (!modelsOf(b).includes(body.model)) return ollamaError(x, 404, `model "${body.model}" not found, try pulling it first`);

  const last = body.messages.at(-1);
  const calls =
    b.toolCalls !== undefined && Array.isArray(body.tools) && body.tools.length > 0 && last?.role !== 'tool'
      ? b.toolCalls.map((c, i) => ({ id: callId(c.name, i), function: { index: i, name: c.name, arguments: JSON.parse(c.arguments) } }))
      : [];
  let answer = b;
  if (body.format !== undefined) {
    const lastUser = [...body.messages].reverse().find((m: any) => m?.role === 'user');
    const reply = b.reply ?? `Fake answer to: ${lastUser?.content?.trim() || '(nothing)'}`;
    answer = { ...b, reply: JSON.stringify(body.format === 'json' ? { answer: reply } : exampleOf(body.format)) };
  }
  const { tokens, finishReason } =
    calls.length > 0 ? { tokens: [] as string[], finishReason: 'stop' } : replyTokens(answer, body.messages, body.options?.num_predict);
  const evalCount = calls.length > 0 ? Math.max(1, wordCount(b.toolCalls!.map((c) => c.arguments).join(' '))) : tokens.length;
  const counts = b.noUsage
    ? {}
    : { prompt_eval_count: promptTokens(body.messages), prompt_eval_duration: 1000, eval_count: evalCount, eval_duration: 5000 };
  const withLogprobs = body.logprobs === true;
  const model = JSON.stringify(body.model);
  const final = (message: object, logprobs?: object[]) =>
    JSON.stringify({
      model: body.model,
      created_at: new Date().toISOString(),
      message: { role: 'assistant', ...message },
      done_reason: finishReason,
      done: true,
      total_duration: 10_000,
      load_duration: 100,
      ...counts,
      ...(logprobs ? { logprobs } : {}),
    });

  if (body.stream === false) {
    if (!(await pause(x, (b.silentMs ?? 0) + tokens.length * (b.tokenDelayMs ?? 0)))) return;
    const message = calls.length > 0 ? { content: '', tool_calls: calls } : { content: tokens.join('') };
    const text = final(message, withLogprobs && tokens.length > 0 ? tokens.map((t) => logprobsFor(t, topLogprobs)) : undefined);
    x.fake.addBytes(Buffer.byteLength(text));
    x.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    x.res.end(text);
    return;
  }

  x.res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  x.res.flushHeaders();
  if (!(await pause(x, b.silentMs))) return;
  // Ollama streams each tool call whole, in a frame of its own before the final one.
  for (let i = 0; i < calls.length; i++) {
    if (i > 0 && !(await pause(x, b.tokenDelayMs))) return;
    const frame = {
      model: body.model,
      created_at: new Date().toISOString(),
      message: { role: 'assistant', content: '', tool_calls: [calls[i]] },
      done: false,
    };
    if (!(await write(x, `${JSON.stringify(frame)}\n`))) return;
  }
  for (let i = 0; i < tokens.length; i++) {
    if (i > 0 && !(await pause(x, b.tokenDelayMs))) return;
    const logprobs = withLogprobs ? `,"logprobs":[${JSON.stringify(logprobsFor(tokens[i]!, topLogprobs))}]` : '';
    const line = `{"model":${model},"created_at":"${new Date().toISOString()}","message":{"role":"assistant","content":${JSON.stringify(tokens[i])}},"done":false${logprobs}}\n`;
    if (!(await write(x, line))) return;
    if (b.dieAfterTokens !== undefined && i + 1 >= b.dieAfterTokens) return die(x);
  }
  if (tokens.length === 0 && b.dieAfterTokens === 0) return die(x);
  if (!(await write(x, `${final({ content: '' })}\n`))) return;
  await endApart(x);
}
