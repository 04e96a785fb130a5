// Before anything is measured: each path answers the benchmark's request with the
// instant upstream's reply, as JSON and as a stream. A benchmark of error pages
// would look fast and mean nothing.
import { request } from 'undici';
import { REPLY_TOKENS } from './fixtures.js';
import type { Target } from './load.js';

const REPLY = REPLY_TOKENS.join('');

export async function checkJson(target: Target): Promise<void> {
  const answer = await request(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
  });
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`${target.name}: ${answer.statusCode} ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { choices?: { message?: { content?: string } }[]; usage?: { total_tokens?: number } };
  if (body.choices?.[0]?.message?.content !== REPLY) throw new Error(`${target.name}: unexpected completion ${text.slice(0, 300)}`);
  if (!body.usage?.total_tokens) throw new Error(`${target.name}: no usage in ${text.slice(0, 300)}`);
}

export async function checkStream(target: Target): Promise<void> {
  const answer = await request(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
  });
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`${target.name}: ${answer.statusCode} ${text.slice(0, 300)}`);
  if (!String(answer.headers['content-type']).startsWith('text/event-stream'))
    throw new Error(`${target.name}: content-type ${answer.headers['content-type']}`);
  let content = '';
  let usage = false;
  const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: '));
  if (frames.at(-1) !== 'data: [DONE]') throw new Error(`${target.name}: the stream does not end with [DONE]: ${text.slice(-300)}`);
  for (const frame of frames.slice(0, -1)) {
    const data = JSON.parse(frame.slice('data: '.length)) as { choices?: { delta?: { content?: string } }[]; usage?: unknown };
    content += data.choices?.[0]?.delta?.content ?? '';
    if (data.usage) usage = true;
  }
  if (content !== REPLY) throw new Error(`${target.name}: streamed "${content}", expected "${REPLY}"`);
  if (!usage) throw new Error(`${target.name}: no usage frame although stream_options.include_usage was set`);
}
