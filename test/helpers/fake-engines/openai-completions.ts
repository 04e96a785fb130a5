// The OpenAI-compatible fake's legacy text completions (POST /v1/completions), plain
// and streamed: the prompt's words echoed back as "Fake completion of: <prompt>",
// `n` choices per prompt (index = prompt × n + choice), `echo`, and a `logprobs`
// object when asked for. Errors and knobs as its chat.
import { beforeHeaders, die, endApart, pause, sendJson, write, type Exchange } from './server.js';
import { modelsOf, replyTokens, wordCount } from './replies.js';

let ids = 0;

function error(x: Exchange, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(x, status, { error: { message, type, param: null, code } });
}

export async function openaiCompletions(x: Exchange): Promise<void> {
  x.fake.countChat(x);
  const b = x.fake.behaviour;
  if (!(await beforeHeaders(x))) return;
  if (b.status !== undefined)
    return error(x, b.status, `fake upstream answered ${b.status}`, b.status >= 500 ? 'server_error' : 'invalid_request_error');
  const body = x.body;
  const prompts: unknown[] = typeof body?.prompt === 'string' ? [body.prompt] : Array.isArray(body?.prompt) ? body.prompt : [];
  if (prompts.length === 0 || !prompts.every((p) => typeof p === 'string'))
    return error(x, 400, "'prompt' must be a string or an array of strings", 'invalid_request_error');
  if (!modelsOf(b).includes(body.model))
    return error(x, 404, `The model \`${body.model}\` does not exist`, 'invalid_request_error', 'model_not_found');
  const n = typeof body.n === 'number' ? body.n : 1;
  const choices = (prompts as string[]).flatMap((prompt) =>
    Array.from({ length: n }, () => {
      const { tokens, finishReason } = replyTokens(
        b.reply === undefined ? { ...b, reply: `Fake completion of: ${prompt.trim() || '(nothing)'}` } : b,
        [],
        body.max_tokens,
      );
      return { prompt, tokens: body.echo === true ? [prompt, ...tokens] : tokens, finishReason };
    }),
  );
  const logprobs = (tokens: string[]) =>
    typeof body.logprobs === 'number' ? { tokens, token_logprobs: tokens.map(() => -0.5), top_logprobs: null, text_offset: [] } : null;
  const id = `cmpl-fake-${++ids}`;
  const created = Math.floor(Date.now() / 1000);
  const promptCount = (prompts as string[]).reduce((s, p) => s + wordCount(p), 0);
  const generated = choices.reduce((s, c) => s + c.tokens.length, 0);
  const usage = b.noUsage ? undefined : { prompt_tokens: promptCount, completion_tokens: generated, total_tokens: promptCount + generated };

  if (body.stream !== true) {
    if (!(await pause(x, b.silentMs))) return;
    return sendJson(x, 200, {
      id,
      object: 'text_completion',
      created,
      model: body.model,
      choices: choices.map((c, index) => ({ text: c.tokens.join(''), index, logprobs: logprobs(c.tokens), finish_reason: c.finishReason })),
      ...(usage ? { usage } : {}),
    });
  }
  const frame = (index: number, text: string, finish: string | null, lp: unknown = null) =>
    `data: ${JSON.stringify({ id, object: 'text_completion', created, model: body.model, choices: [{ text, index, logprobs: lp, finish_reason: finish }] })}\n\n`;
  x.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  x.res.flushHeaders();
  if (!(await pause(x, b.silentMs))) return;
  for (let index = 0; index < choices.length; index++) {
    const c = choices[index]!;
    for (let i = 0; i < c.tokens.length; i++) {
      if (!(await pause(x, b.tokenDelayMs))) return;
      if (!(await write(x, frame(index, c.tokens[i]!, null, logprobs([c.tokens[i]!]))))) return;
      if (b.dieAfterTokens !== undefined && i + 1 >= b.dieAfterTokens) return die(x);
    }
    if (!(await write(x, frame(index, '', c.finishReason)))) return;
  }
  if (body.stream_options?.include_usage === true && usage)
    if (!(await write(x, `data: ${JSON.stringify({ id, object: 'text_completion', created, model: body.model, choices: [], usage })}\n\n`)))
      return;
  if (!(await write(x, 'data: [DONE]\n\n'))) return;
  await endApart(x);
}
