// Child process: an OpenAI-compatible engine that answers at once, so that what the
// benchmark measures in front of it is the proxy's cost and nothing else.
// POST /v1/chat/completions answers JSON, or (stream: true) every SSE frame in one
// write: the role frame, one frame per token, the finish frame, the usage frame when
// stream_options.include_usage asks for it, and [DONE]. GET /v1/models lists the one
// model. GET /bench/stats counts the chat requests served and the connections
// accepted (a proxy should send one upstream request per client request, over
// connections it keeps alive).
import http from 'node:http';
import { announceReady } from './children.js';
import { BENCH_MODEL, PROMPT_TOKENS, REPLY_TOKENS } from './fixtures.js';

// tsx turns source maps on; compiled production code runs without them (they make every Error costlier).
process.setSourceMapsEnabled(false);

const created = Math.floor(Date.now() / 1000);
const id = 'chatcmpl-bench';
const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: REPLY_TOKENS.length, total_tokens: PROMPT_TOKENS + REPLY_TOKENS.length };

const jsonAnswer = Buffer.from(
  JSON.stringify({
    id,
    object: 'chat.completion',
    created,
    model: BENCH_MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: REPLY_TOKENS.join('') }, finish_reason: 'stop' }],
    usage,
  }),
);

const frame = (choices: unknown[], extra: object = {}) =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: BENCH_MODEL, choices, ...extra })}\n\n`;
const streamFrames = [
  frame([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
  ...REPLY_TOKENS.map((content) => frame([{ index: 0, delta: { content }, finish_reason: null }])),
  frame([{ index: 0, delta: {}, finish_reason: 'stop' }]),
].join('');
const streamAnswer = Buffer.from(`${streamFrames}data: [DONE]\n\n`);
const streamAnswerWithUsage = Buffer.from(`${streamFrames}${frame([], { usage })}data: [DONE]\n\n`);

const modelList = Buffer.from(JSON.stringify({ object: 'list', data: [{ id: BENCH_MODEL, object: 'model', created, owned_by: 'bench' }] }));

const served = { chat: 0, stream: 0, models: 0, connections: 0 };

function chat(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: { stream?: boolean; stream_options?: { include_usage?: boolean } };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"body is not JSON"}}');
      return;
    }
    if (body.stream === true) {
      served.stream++;
      // No content-length: chunked, like a real SSE answer.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(body.stream_options?.include_usage ? streamAnswerWithUsage : streamAnswer);
    } else {
      served.chat++;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': jsonAnswer.length });
      res.end(jsonAnswer);
    }
  });
}

const server = http.createServer((req, res) => {
  const path = req.url?.split('?')[0];
  if (req.method === 'POST' && path === '/v1/chat/completions') return chat(req, res);
  if (req.method === 'GET' && path === '/v1/models') {
    served.models++;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': modelList.length }).end(modelList);
    return;
  }
  if (req.method === 'GET' && path === '/bench/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
    return;
  }
  req.resume();
  res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
});
server.on('connection', () => served.connections++);
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  announceReady({ url: `http://127.0.0.1:${port}` });
});
