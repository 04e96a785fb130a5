// The Ollama fake's routes (its native API): tags, version, chat (plain and streamed
// as NDJSON, in ollama-chat.ts), embeddings, pulls with their progress frames, and
// Ollama-shaped errors.
import { pause, sendJson, write, type Exchange } from './server.js';
import { embeddingOf, inputsOf, modelsOf } from './replies.js';
import { ollamaChat } from './ollama-chat.js';

const OLLAMA_DIGEST = 'sha256:6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa';

function ollamaError(x: Exchange, status: number, message: string): void {
  sendJson(x, status, { error: message });
}

export async function ollamaRoutes(x: Exchange): Promise<void> {
  const route = `${x.req.method} ${x.req.url?.split('?')[0]}`;
  const b = x.fake.behaviour;
  if (route === 'GET /api/tags') {
    return sendJson(x, 200, {
      models: modelsOf(b).map((name) => ({
        name,
        model: name,
        modified_at: '2024-11-01T10:00:00.000000000Z',
        size: 1_234_567,
        digest: OLLAMA_DIGEST.slice(7),
        details: { format: 'gguf', family: 'fake', parameter_size: '1M', quantization_level: 'Q8_0' },
      })),
    });
  }
  if (route === 'GET /api/version') return sendJson(x, 200, { version: '0.6.2' });
  if (route === 'POST /api/chat') return ollamaChat(x);
  if (route === 'POST /api/embed') {
    const inputs = inputsOf(x.body?.input);
    if (!inputs) return ollamaError(x, 400, 'invalid input type');
    if (!modelsOf(b).includes(x.body?.model)) return ollamaNoModel(x);
    return sendJson(x, 200, {
      model: x.body.model,
      embeddings: inputs.map(embeddingOf),
      total_duration: 1000,
      load_duration: 100,
      prompt_eval_count: inputs.length,
    });
  }
  if (route === 'POST /api/pull') return ollamaPull(x);
  // Ollama's router answers unknown paths in plain text.
  x.res.writeHead(404, { 'content-type': 'text/plain' });
  x.res.end('404 page not found');
}

function ollamaNoModel(x: Exchange): void {
  ollamaError(x, 404, `model "${x.body?.model}" not found, try pulling it first`);
}

function defaultPullFrames(): object[] {
  const total = 2_000_000;
  const layer = OLLAMA_DIGEST.slice(7, 19);
  return [
    { status: 'pulling manifest' },
    { status: `pulling ${layer}`, digest: OLLAMA_DIGEST, total },
    { status: `pulling ${layer}`, digest: OLLAMA_DIGEST, total, completed: total / 2 },
    { status: `pulling ${layer}`, digest: OLLAMA_DIGEST, total, completed: total },
    { status: 'verifying sha256 digest' },
    { status: 'writing manifest' },
    { status: 'removing any unused layers' },
    { status: 'success' },
  ];
}

async function ollamaPull(x: Exchange): Promise<void> {
  const b = x.fake.behaviour;
  const name: unknown = x.body?.model ?? x.body?.name;
  if (typeof name !== 'string' || name === '') return ollamaError(x, 400, 'model is required');
  x.fake.countStreamed(x);
  if (!(await pause(x, b.delayHeadersMs))) return;
  const frames = b.pullFrames ?? defaultPullFrames();
  const succeeded = (frames[frames.length - 1] as { status?: unknown } | undefined)?.status === 'success';
  // A successful pull makes the model servable, as on a real Ollama.
  const learn = () => {
    if (succeeded && !modelsOf(b).includes(name)) b.models = [...modelsOf(b), name];
  };
  if (x.body?.stream === false) {
    learn();
    return sendJson(x, 200, frames[frames.length - 1] ?? { status: 'success' });
  }
  x.res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  x.res.flushHeaders();
  for (let i = 0; i < frames.length; i++) {
    if (i > 0 && !(await pause(x, b.tokenDelayMs))) return;
    if (!(await write(x, `${JSON.stringify(frames[i])}\n`))) return;
  }
  learn();
  x.res.end();
}
