// What chat/completions' schema cannot say, checked after Ajv and before anything
// else happens (no engine is called for a refused request): which fields a message
// of each role may carry, that a named tool_choice is among the tools, that a JSON
// schema (a tool's parameters, response_format's schema) is of bounded size and
// depth, and the fields that only make sense together. Each refusal is a 400 naming
// the field, as the schema's own are.
import { validation } from '../../../platform/errors.js';
import { MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, type ChatBodyMessage, type ChatCompletionBody } from './schemas.js';

export function checkChatBody(body: ChatCompletionBody): void {
  const { messages } = body;
  for (let i = 0; i < messages.length; i++) checkMessage(messages[i]!, `messages[${i}]`);

  const tools = body.tools;
  const names = new Set<string>();
  if (tools) {
    for (let i = 0; i < tools.length; i++) {
      const fn = tools[i]!.function;
      if (names.has(fn.name)) throw validation(`tools[${i}].function.name`, `"${fn.name}" is declared twice; tool names must be unique`);
      names.add(fn.name);
      if (fn.parameters !== undefined) checkSchema(`tools[${i}].function.parameters`, fn.parameters);
    }
  }
  const choice = body.tool_choice;
  if (choice === 'required' && names.size === 0) throw validation('tool_choice', '"required" needs at least one tool in `tools`');
  if (typeof choice === 'object' && !names.has(choice.function.name))
    throw validation('tool_choice.function.name', `"${choice.function.name}" is not one of the functions in \`tools\``);

  const format = body.response_format;
  if (format?.type === 'json_schema') {
    if (format.json_schema === undefined) throw validation('response_format.json_schema', 'is required when type is "json_schema"');
    if (format.json_schema.schema !== undefined) checkSchema('response_format.json_schema.schema', format.json_schema.schema);
  }

  if (body.top_logprobs !== undefined && body.logprobs !== true) throw validation('top_logprobs', 'is allowed only with logprobs: true');
  if (body.max_completion_tokens !== undefined && body.max_tokens !== undefined && body.max_completion_tokens !== body.max_tokens)
    throw validation('max_completion_tokens', 'differs from max_tokens (its older name); send one of them');
}

function checkMessage(m: ChatBodyMessage, at: string): void {
  const { role, content } = m;
  // The plain message (most requests, every message of them): nothing more to check.
  if (typeof content === 'string' && m.tool_calls === undefined && m.tool_call_id === undefined && role !== 'tool') return;

  if (m.tool_calls !== undefined && role !== 'assistant') throw validation(`${at}.tool_calls`, 'only assistant messages carry tool calls');
  if (role === 'tool') {
    if (m.tool_call_id === undefined) throw validation(`${at}.tool_call_id`, 'is required for a tool message');
  } else if (m.tool_call_id !== undefined) throw validation(`${at}.tool_call_id`, 'only tool messages carry one');

  if (content === undefined || content === null) {
    if (role === 'assistant' && m.tool_calls !== undefined && m.tool_calls.length > 0) return;
    throw validation(`${at}.content`, 'is required (it may be null only in an assistant message with tool_calls)');
  }
  if (typeof content === 'string') return;
  for (let j = 0; j < content.length; j++) {
    const part = content[j]!;
    if (part.type === 'text') {
      if (part.text === undefined) throw validation(`${at}.content[${j}].text`, 'is required for a text part');
    } else {
      if (role !== 'user') throw validation(`${at}.content[${j}].type`, 'image parts are allowed in user messages only');
      if (part.image_url === undefined) throw validation(`${at}.content[${j}].image_url`, 'is required for an image_url part');
    }
  }
}

/**
 * A JSON schema the engine will compile: refused beyond MAX_SCHEMA_DEPTH levels or
 * MAX_SCHEMA_BYTES serialized (the depth first, so that a deep one is never walked
 * further than the bound, nor serialized).
 */
function checkSchema(field: string, schema: Record<string, unknown>): void {
  if (deeperThan(schema, MAX_SCHEMA_DEPTH)) throw validation(field, `nests deeper than ${MAX_SCHEMA_DEPTH} levels of objects and arrays`);
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES)
    throw validation(field, `is larger than ${MAX_SCHEMA_BYTES} bytes serialized`);
}

/** Whether objects and arrays nest more than `levels` deep in `value`: the recursion never goes past `levels`. */
function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (deeperThan(child, levels - 1)) return true;
  return false;
}
