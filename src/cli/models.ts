// `gateway models list|pull`: the embedded `local` engine's GGUF models, managed
// from the command line. These work on the models directory itself, with or
// without a running server: a running server picks new files up on its next
// health check (GATEWAY_NODE_HEALTH_INTERVAL_SECONDS). A pull is downloaded,
// checked (sha256, GGUF header, a trial load in a llama.cpp child process) and
// only then moved where models are listed.
import { parseArgs } from 'node:util';
import type { Config } from '../platform/config.js';
import { LocalEngine } from '../engines/local/adapter.js';
import type { PullProgress } from '../engines/types.js';
import { localEngineOptions } from '../areas/llm/services.js';

export const MODELS_USAGE = [
  'models list                     List the GGUF models the local engine serves (GATEWAY_MODELS_DIR).',
  'models pull <name> --url <url>  Download a GGUF model into the local engine (--sha256 <hex> to verify it).',
];

export async function modelsCommand(
  config: Config,
  argv: string[],
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { url: { type: 'string' }, sha256: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  const [action, name, ...extra] = positionals;
  if (values.help || action === undefined) {
    (action === undefined && !values.help ? err : out)(['Usage:', ...MODELS_USAGE.map((line) => `  gateway ${line}`)].join('\n'));
    return action === undefined && !values.help ? 1 : 0;
  }
  if (extra.length) throw new Error(`unexpected argument "${extra[0]}"`);
  const engine = new LocalEngine(localEngineOptions(config.llm));
  try {
    if (action === 'list') {
      const models = await engine.listModels(AbortSignal.timeout(30_000));
      if (values.json) out(JSON.stringify({ modelsDir: config.llm.modelsDir, data: models.map((m) => m.id) }));
      else if (models.length === 0)
        out(`No models in ${config.llm.modelsDir}. Pull one with: gateway models pull <name> --url <url-of-a-gguf-file>`);
      else out(models.map((m) => m.id).join('\n'));
      return 0;
    }
    if (action === 'pull') {
      if (!name) throw new Error('models pull: the model name is required (the file name to store it under)');
      if (!values.url) throw new Error('models pull: --url is required (where to download the GGUF file from)');
      return await pull(engine, { name, url: values.url, sha256: values.sha256, json: values.json === true }, out, err);
    }
    throw new Error(`unknown command "models ${action}"; try: models list, models pull`);
  } finally {
    await engine.close();
  }
}

async function pull(
  engine: LocalEngine,
  request: { name: string; url: string; sha256: string | undefined; json: boolean },
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  let last: PullProgress | undefined;
  try {
    const frames = engine.pull({
      model: request.name,
      url: request.url,
      ...(request.sha256 ? { sha256: request.sha256 } : {}),
      signal: controller.signal,
    });
    for await (const frame of frames) {
      last = frame;
      if (request.json) out(JSON.stringify(frame));
      else err(describe(frame));
    }
  } finally {
    process.off('SIGINT', stop);
  }
  if (last?.status !== 'success') throw new Error('the pull ended without success');
  if (!request.json) out(`Pulled ${request.name}: it is now listed by GET /api/llm/v1/models.`);
  return 0;
}

function describe(frame: PullProgress): string {
  if (frame.total && frame.completed !== undefined) {
    const percent = ((frame.completed / frame.total) * 100).toFixed(1);
    return `${frame.status} ${mebibytes(frame.completed)} / ${mebibytes(frame.total)} MiB (${percent}%)`;
  }
  if (frame.completed !== undefined) return `${frame.status} ${mebibytes(frame.completed)} MiB`;
  return frame.status;
}

const mebibytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
