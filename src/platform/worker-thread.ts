// Starting a worker thread from a module next to the caller, from source or built.
// Built, the module is the .js file beside the caller. From source (tests, `npm run
// dev`) only the .ts exists and Node cannot load it by itself, so the worker starts
// from a small bootstrap that registers tsx's loader first.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `url` names the module as built (`new URL('./x-worker.js', import.meta.url)`). */
export function startWorker(url: URL, options: WorkerOptions = {}): Worker {
  if (existsSync(fileURLToPath(url))) return new Worker(url, options);
  const source = new URL(url.href.replace(/\.js$/, '.ts'));
  const loader = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
