// The OpenAI-compatible fake's routes (vLLM, llama.cpp server, OpenAI): model list,
// chat completions (plain and streamed as server-sent events), embeddings, and
// OpenAI-shaped errors.
import { beforeHeaders, die, endApart, pause, sendJson, write, type Exchange } from './server.js';
import { openaiCompletions } from './openai-completions.js';
import { embeddingOf, inputsOf, modelsOf, promptTokens, replyTokens, wordCount } from './replies.js';

let openaiIds = 0;

function openaiError(x: Exchange, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(x, status, { error: { message, type, param: null, code } });
}

export async function openaiRoutes(x: Exchange): Promise<void> {
  const route = `${x.req.method} ${x.req.url?.split('?')[0]}`;
  const b = x.fake.behaviour;
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
    if (!modelsOf(b).includes(x.body?.model)) return openaiNoModel(x);
    return sendJson(x, 200, {
      object: 'list',
      // `dimensions` (text-embedding-3's shortening): the first that many numbers.
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embeddingOf(text).slice(0, x.body.dimensions) })),
      model: x.body.model,
      usage: { prompt_tokens: inputs.reduce((n, s) => n + wordCount(s), 0), total_tokens: inputs.reduce((n, s) => n + wordCount(s), 0) },
    });
  }
  return openaiError(x, 404, `Not found: ${route}`, 'invalid_request_error');
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
  if (!modelsOf(b).includes(body.model)) return openaiNoModel(x);
  const { tokens, finishReason } = replyTokens(b, body.messages, body.max_tokens ?? body.max_completion_tokens);
  const id = `chatcmpl-fake-${++openaiIds}`;
  const created = Math.floor(Date.now() / 1000);
  const usage =
    b.usage ??
    (b.noUsage
      ? undefined
      : {
          prompt_tokens: promptTokens(body.messages),
          completion_tokens: tokens.length,
          total_tokens: promptTokens(body.messages) + tokens.length,
        });

  if (body.stream !== true) {
    if (!(await pause(x, (b.silentMs ?? 0) + tokens.length * (b.tokenDelayMs ?? 0)))) return;
    return sendJson(x, 200, {
      id,
      object: 'chat.completion',
      created,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: tokens.join('') }, logprobs: null, finish_reason: finishReason }],
      ...(usage ? { usage } : {}),
    });
  }

  const includeUsage = body.stream_options?.include_usage === true && usage !== undefined;
  // Like OpenAI: with include_usage every chunk carries `usage: null` until the usage-only chunk.
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(body.model)},`;
  const tail = includeUsage ? ',"usage":null}' : '}';
  const frame = (delta: object, finish: string | null) =>
    `data: ${head}"choices":[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]${tail}\n\n`;

  x.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  x.res.flushHeaders();
  if (!(await pause(x, b.silentMs))) return;
  if (!(await write(x, frame({ role: 'assistant', content: '' }, null)))) return;
  for (let i = 0; i < tokens.length; i++) {
    if (i > 0 && !(await pause(x, b.tokenDelayMs))) return;
    if (!(await write(x, frame({ content: tokens[i] }, null)))) return;
    if (b.dieAfterTokens !== undefined && i + 1 >= b.dieAfterTokens) return die(x);
  }
  if (tokens.length === 0 && b.dieAfterTokens === 0) return die(x);
  if (!(await write(x, frame({}, finishReason)))) return;
  if (includeUsage && !(await write(x, `data: ${head}"choices":[],"usage":${JSON.stringify(usage)}}\n\n`))) return;
  if (!(await write(x, 'data: [DONE]\n\n'))) return;
  await endApart(x);
}
