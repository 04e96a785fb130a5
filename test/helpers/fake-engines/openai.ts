// The OpenAI-compatible fake's routes (vLLM, llama.cpp server, OpenAI): model list,
// chat completions (plain and streamed as server-sent events), embeddings, rerank
// (/v1/rerank as vLLM answers it, /rerank as TEI does), and OpenAI-shaped errors.
import { beforeHeaders, die, endApart, pause, sendJson, write, type Exchange } from './server.js';
import { openaiCompletions } from './openai-completions.js';
import { embeddingOf, inputsOf, modelsOf, promptTokens, replyText, replyTokens, schemaSample, tokenLogprob, wordCount } from './replies.js';
import type { FakeBehaviour } from './types.js';

let openaiIds = 0;

function openaiError(x: Exchange, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(x, status, { error: { message, type, param: null, code } });
}

export async function openaiRoutes(x: Exchange): Promise<void> {
  const route = `${x.req.method} ${x.req.url?.split('?')[0]}`;
  const b = x.fake.behaviour;
  if (b.lacks?.includes(x.req.url?.split('?')[0] ?? '')) return sendJson(x, 404, { detail: 'Not Found' });
  if (route === 'GET /v1/models') {
    return sendJson(x, 200, {
      object: 'list',
      data: modelsOf(b).map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })),
    });
  }
  if (route === 'POST /v1/chat/completions') return openaiChat(x);
  if (route === 'POST /v1/completions') return openaiCompletions(x);
  if (route === 'POST /v1/embeddings') {
    if (b.status !== undefined) return openaiError(x, b.status, `fake upstream answered ${b.status}`, 'server_error');
    const inputs = inputsOf(x.body?.input);
    if (!inputs) return openaiError(x, 400, "'input' must be a string or an array of strings", 'invalid_request_error');
    if (!servable(b, x.body?.model)) return openaiNoModel(x);
    return sendJson(x, 200, {
      object: 'list',
      // `dimensions` (text-embedding-3's shortening): the first that many numbers.
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embeddingOf(text).slice(0, x.body.dimensions) })),
      model: x.body.model,
      usage: { prompt_tokens: inputs.reduce((n, s) => n + wordCount(s), 0), total_tokens: inputs.reduce((n, s) => n + wordCount(s), 0) },
    });
  }
  if (route === 'POST /v1/rerank' || route === 'POST /rerank') {
    openaiRerank(x, route === 'POST /rerank');
    return;
  }
  return openaiError(x, 404, `Not found: ${route}`, 'invalid_request_error');
}

function openaiRerank(x: Exchange, tei: boolean): void {
  const b = x.fake.behaviour;
  if (b.status !== undefined) {
    openaiError(x, b.status, `fake upstream answered ${b.status}`, 'server_error');
    return;
  }
  const documents: unknown = tei ? x.body?.texts : x.body?.documents;
  if (typeof x.body?.query !== 'string' || !Array.isArray(documents) || !documents.every((d) => typeof d === 'string')) {
    openaiError(x, 400, "'query' and 'documents' are required", 'invalid_request_error');
    return;
  }
  if (!servable(b, x.body?.model)) {
    openaiNoModel(x);
    return;
  }
  const rule = b.rerank ?? queryWordShare;
  const scored = documents.map((document: string, index) => ({ index, score: rule(x.body.query, document) }));
  scored.sort((l, r) => r.score - l.score);
  if (tei) {
    sendJson(x, 200, scored);
    return;
  }
  sendJson(x, 200, {
    id: 'rerank-fake',
    model: x.body.model,
    results: scored.map((s) => ({ index: s.index, relevance_score: s.score })),
    usage: { total_tokens: documents.reduce((n: number, d: string) => n + wordCount(d) + wordCount(x.body.query), 0) },
  });
}

function queryWordShare(query: string, document: string): number {
  const words = query.toLowerCase().match(/\w+/g) ?? [];
  const held = new Set(document.toLowerCase().match(/\w+/g) ?? []);
  return words.length === 0 ? 0 : words.filter((w) => held.has(w)).length / words.length;
}

function servable(b: FakeBehaviour, model: unknown): boolean {
  return modelsOf(b).includes(model as string) && !b.unservable?.includes(model as string);
}

function openaiNoModel(x: Exchange): void {
  openaiError(x, 404, `The model \`${x.body?.model}\` does not exist`, 'invalid_request_error', 'model_not_found');
}

async function openaiChat(x: Exchange): Promise<void> {
  x.fake.countChat(x);
  const b = x.fake.behaviour;
  if (!(await beforeHeaders(x))) return;
  if (b.status !== undefined) {
    const type = b.status >= 500 ? 'server_error' : 'invalid_request_error';
    return openaiError(x, b.status, `fake upstream answered ${b.status}`, type);
  }
  const body = x.body;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) {
    return openaiError(x, 400, "'messages' is a required property", 'invalid_request_error');
  }
  if (!servable(b, body.model)) return openaiNoModel(x);
  const plan = answerPlan(b, body);
  const n = Number.isInteger(body.n) && body.n > 1 ? body.n : 1;
  const limit = body.max_tokens ?? body.max_completion_tokens;
  const choices: Choice[] = Array.from({ length: n }, (_, i) => {
    if (plan.calls) {
      const calls = plan.calls.map((c) => ({ id: `call_fake_${++callIds}`, name: c.name, arguments: c.arguments }));
      return { tokens: [], finishReason: b.finishReason ?? 'tool_calls', calls };
    }
    // Choice 0 is the answer as ever; choice i > 0 says which it is.
    const text = i === 0 ? plan.text : `${plan.text ?? replyText(b, body.messages)} (${i})`;
    const { tokens, finishReason } = replyTokens(b, body.messages, limit, text);
    return { tokens, finishReason: b.finishReason ?? finishReason };
  });
  const tokens = choices[0]!.tokens;
  const top = body.logprobs === true ? (Number.isInteger(body.top_logprobs) ? body.top_logprobs : 0) : undefined;
  const id = `chatcmpl-fake-${++openaiIds}`;
  const created = Math.floor(Date.now() / 1000);
  const generated = choices.reduce(
    (sum, c) => sum + c.tokens.length + (c.calls ?? []).reduce((k, call) => k + wordCount(`${call.name} ${call.arguments}`), 0),
    0,
  );
  const usage =
    b.usage ??
    (b.noUsage
      ? undefined
      : {
          prompt_tokens: promptTokens(body.messages),
          completion_tokens: generated,
          total_tokens: promptTokens(body.messages) + generated,
        });

  if (body.stream !== true) {
    if (!(await pause(x, (b.silentMs ?? 0) + tokens.length * (b.tokenDelayMs ?? 0)))) return;
    return sendJson(x, 200, {
      id,
      object: 'chat.completion',
      created,
      model: body.model,
      system_fingerprint: FINGERPRINT,
      choices: choices.map((c, index) => ({
        index,
        message: c.calls
          ? {
              role: 'assistant',
              content: null,
              tool_calls: c.calls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : { role: 'assistant', content: c.tokens.join('') },
        logprobs: top !== undefined && !c.calls ? { content: c.tokens.map((t, i) => tokenLogprob(t, i, top)), refusal: null } : null,
        finish_reason: c.finishReason,
      })),
      ...(usage ? { usage } : {}),
    });
  }

  const includeUsage = body.stream_options?.include_usage === true && usage !== undefined;
  // Like OpenAI: with include_usage every chunk carries `usage: null` until the usage-only chunk.
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(body.model)},"system_fingerprint":"${FINGERPRINT}",`;
  const tail = includeUsage ? ',"usage":null}' : '}';
  const frame = (delta: object, finish: string | null, index = 0, logprobs: object | null = null) =>
    `data: ${head}"choices":[{"index":${index},"delta":${JSON.stringify(delta)},"logprobs":${JSON.stringify(logprobs)},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]${tail}\n\n`;

  x.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  x.res.flushHeaders();
  if (!(await pause(x, b.silentMs))) return;
  for (let i = 0; i < n; i++) {
    const delta = choices[i]!.calls ? { role: 'assistant', content: null } : { role: 'assistant', content: '' };
    if (!(await write(x, frame(delta, null, i)))) return;
  }
  // With n > 1 the choices' tokens interleave, one chunk per choice, as OpenAI sends them.
  const longest = Math.max(...choices.map((c) => c.tokens.length));
  let written = 0;
  for (let t = 0; t < longest; t++) {
    for (let i = 0; i < n; i++) {
      const token = choices[i]!.tokens[t];
      if (token === undefined) continue;
      if (written > 0 && !(await pause(x, b.tokenDelayMs))) return;
      const logprobs = top === undefined ? null : { content: [tokenLogprob(token, t, top)], refusal: null };
      if (!(await write(x, frame({ content: token }, null, i, logprobs)))) return;
      written++;
      if (b.dieAfterTokens !== undefined && written >= b.dieAfterTokens) return die(x);
    }
  }
  if (written === 0 && b.dieAfterTokens === 0) return die(x);
  for (let i = 0; i < n; i++) {
    const calls = choices[i]!.calls ?? [];
    for (let k = 0; k < calls.length; k++) {
      const call = calls[k]!;
      const first = { index: k, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
      if (!(await write(x, frame({ tool_calls: [first] }, null, i)))) return;
      // The arguments in two pieces, as a model writes them token by token.
      const cut = Math.ceil(call.arguments.length / 2);
      for (const piece of [call.arguments.slice(0, cut), call.arguments.slice(cut)]) {
        if (piece === '') continue;
        if (!(await pause(x, b.tokenDelayMs))) return;
        if (!(await write(x, frame({ tool_calls: [{ index: k, function: { arguments: piece } }] }, null, i)))) return;
      }
    }
  }
  for (let i = 0; i < n; i++) if (!(await write(x, frame({}, choices[i]!.finishReason, i)))) return;
  if (includeUsage && !(await write(x, `data: ${head}"choices":[],"usage":${JSON.stringify(usage)}}\n\n`))) return;
  if (!(await write(x, 'data: [DONE]\n\n'))) return;
  await endApart(x);
}

const FINGERPRINT = 'fp_fake';
let callIds = 0;

interface Choice {
  tokens: string[];
  finishReason: string;
  calls?: { id: string; name: string; arguments: string }[];
}

/**
 * What the request makes the fake answer instead of its default text: the result of
 * a tool call, the calls the `toolCalls` knob (or a tool_choice naming a function)
 * asks for, or JSON shaped by `response_format`.
 */
function answerPlan(b: FakeBehaviour, body: any): { calls?: { name: string; arguments: string }[]; text?: string } {
  const last = body.messages.at(-1);
  if (last?.role === 'tool' && !b.toolCallsAlways) return { text: `Fake answer to tool result: ${contentText(last.content)}` };
  if (Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none') {
    if (b.toolCalls) return { calls: b.toolCalls };
    const named = body.tool_choice?.function?.name;
    if (typeof named === 'string') return { calls: [{ name: named, arguments: '{}' }] };
  }
  const format = body.response_format;
  if (format?.type === 'json_schema') return { text: JSON.stringify(schemaSample(format.json_schema?.schema)) };
  if (format?.type === 'json_object') return { text: JSON.stringify({ answer: replyText(b, body.messages) }) };
  return {};
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p: any) => p?.type === 'text' && typeof p.text === 'string')
    .map((p: any) => p.text)
    .join('\n');
}
