// What a create asks of the generation beyond its input: function tools, the tool
// choice, the text format, sampling; and the fields we refuse rather than ignore
// (they would change the answer). The tools and choice are kept in OpenAI's
// Responses shape for the response object, and given to the engine in the chat
// shape of ChatRequest.options.
import type { ChatOptions, ResponseFormat, ToolChoice, ToolDefinition } from '../../../engines/types.js';
import { validation } from '../../../platform/errors.js';
import { checkJsonObject, checkText } from './checks.js';
import { mcpSpecOf, type McpToolSpec } from './mcp-tools.js';
import type { CreateResponseBody } from './schemas.js';

/** A function tool as the Responses API shapes it. */
export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export type ResponseToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

export interface AskedOptions {
  tools: FunctionTool[];
  /** Every tool as asked, in order (the response's `tools`). */
  asked: (FunctionTool | McpToolSpec)[];
  /** The mcp tools, with their place in `tools` (mcp-tools.ts resolves them). */
  mcp: { spec: McpToolSpec; index: number }[];
  toolChoice: ResponseToolChoice;
  /** `text.format` as asked (OpenAI's Responses shape), `{type: 'text'}` by default. */
  format: Record<string, unknown>;
  /** For the engine; absent when nothing beyond the defaults was asked. */
  engine?: ChatOptions;
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function optionsOf(body: CreateResponseBody): AskedOptions {
  refuseUnsupported(body);
  const tools: FunctionTool[] = [];
  const mcp: AskedOptions['mcp'] = [];
  const asked: AskedOptions['asked'] = [];
  const names = new Set<string>();
  (body.tools ?? []).forEach((raw, i) => {
    const tool = toolOf(raw, i);
    asked.push(tool);
    if (tool.type === 'mcp') {
      mcp.push({ spec: tool, index: i });
      return;
    }
    if (names.has(tool.name)) throw validation(`tools[${i}].name`, `must be unique: "${tool.name}" is given twice`);
    names.add(tool.name);
    tools.push(tool);
  });
  const offered = tools.length + mcp.length > 0;
  const toolChoice = choiceOf(body.tool_choice, names, offered);
  const { format, responseFormat } = formatOf(body.text?.format);
  const engine: ChatOptions = {
    ...(tools.length ? { tools: tools.map(chatTool) } : {}),
    ...(offered && body.tool_choice != null ? { tool_choice: chatChoice(toolChoice) } : {}),
    ...(offered && body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(responseFormat ? { response_format: responseFormat } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.user !== undefined ? { user: body.user } : {}),
  };
  return { tools, asked, mcp, toolChoice, format, ...(Object.keys(engine).length ? { engine } : {}) };
}

function refuseUnsupported(body: CreateResponseBody): void {
  if (body.background === true)
    throw validation('background', 'background responses are not supported: use stream, or wait for the answer');
  if (body.include?.length) throw validation('include', 'is not supported: the response carries everything it has');
  if (body.reasoning != null) throw validation('reasoning', 'is not supported by the gateway’s engines');
  if (body.prompt != null) throw validation('prompt', 'prompt templates are not supported: send instructions and input');
  if (body.top_logprobs) throw validation('top_logprobs', 'is not supported on responses');
}

function toolOf(raw: unknown, i: number): FunctionTool | McpToolSpec {
  const at = `tools[${i}]`;
  if (raw === null || typeof raw !== 'object') throw validation(at, 'must be a tool object');
  const tool = raw as Record<string, unknown>;
  if (tool.type === 'mcp') return mcpSpecOf(tool, at);
  if (tool.type !== 'function') throw validation(`${at}.type`, 'only "function" and "mcp" tools are supported');
  const name = checkText(tool.name, `${at}.name`, 64, 'line');
  if (!NAME.test(name)) throw validation(`${at}.name`, 'must be 1 to 64 letters, digits, _ or -');
  if (tool.description != null) checkText(tool.description, `${at}.description`, 4096);
  if (tool.parameters != null) checkJsonObject(tool.parameters, `${at}.parameters`);
  if (tool.strict != null && typeof tool.strict !== 'boolean') throw validation(`${at}.strict`, 'must be a boolean');
  return {
    type: 'function',
    name,
    description: (tool.description as string | undefined) ?? null,
    parameters: (tool.parameters as Record<string, unknown> | undefined) ?? null,
    strict: (tool.strict as boolean | undefined) ?? null,
  };
}

function choiceOf(raw: unknown, names: Set<string>, offered: boolean): ResponseToolChoice {
  if (raw == null) return 'auto';
  if (raw === 'none' || raw === 'auto' || raw === 'required') {
    if (raw === 'required' && !offered) throw validation('tool_choice', '"required" needs at least one tool in tools');
    return raw;
  }
  const choice = raw as { type?: unknown; name?: unknown };
  if (typeof raw !== 'object' || choice.type !== 'function')
    throw validation('tool_choice', 'must be "none", "auto", "required" or {"type": "function", "name": …}');
  if (typeof choice.name !== 'string' || !names.has(choice.name)) throw validation('tool_choice.name', 'must name a function in tools');
  return { type: 'function', name: choice.name };
}

function formatOf(raw: unknown): { format: Record<string, unknown>; responseFormat?: ResponseFormat } {
  if (raw == null) return { format: { type: 'text' } };
  const f = raw as Record<string, unknown>;
  if (f.type === 'text') return { format: { type: 'text' } };
  if (f.type === 'json_object') return { format: { type: 'json_object' }, responseFormat: { type: 'json_object' } };
  if (f.type !== 'json_schema') throw validation('text.format.type', 'must be "text", "json_object" or "json_schema"');
  const name = checkText(f.name, 'text.format.name', 64, 'line');
  if (!NAME.test(name)) throw validation('text.format.name', 'must be 1 to 64 letters, digits, _ or -');
  const schema = checkJsonObject(f.schema, 'text.format.schema');
  const description = f.description == null ? undefined : checkText(f.description, 'text.format.description', 4096);
  if (f.strict != null && typeof f.strict !== 'boolean') throw validation('text.format.strict', 'must be a boolean');
  const strict = (f.strict as boolean | null | undefined) ?? null;
  return {
    format: { type: 'json_schema', name, schema, strict, ...(description ? { description } : {}) },
    responseFormat: { type: 'json_schema', json_schema: { name, schema, strict, ...(description ? { description } : {}) } },
  };
}

const chatTool = (tool: FunctionTool): ToolDefinition => ({
  type: 'function',
  function: {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    ...(tool.parameters ? { parameters: tool.parameters } : {}),
    ...(tool.strict != null ? { strict: tool.strict } : {}),
  },
});

const chatChoice = (choice: ResponseToolChoice): ToolChoice =>
  typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
