// The models directory: one GGUF file per model, its id the file name without
// `.gguf`. Only files whose header validates are offered, and a file that crashed
// llama.cpp is not offered again until it changes (size or mtime). Header checks
// are cached by name, size and mtime, so listing is a readdir and a few stats.
import { mkdir, readdir, stat, access, constants } from 'node:fs/promises';
import path from 'node:path';
import { EngineError, type EngineModel } from '../types.js';
import { checkGgufHeader, type GgufCheck } from './gguf-header.js';

export const MODEL_EXTENSION = '.gguf';
/** Downloads in progress live here, out of sight of the listing (same file system, so the final rename is atomic). */
export const PARTIAL_DIR = '.partial';

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$/;

/** A model file as it is now; `key` changes whenever the file does. */
export interface ModelFile {
  id: string;
  path: string;
  size: number;
  mtimeMs: number;
  key: string;
}

/**
 * The model id a user-supplied name stands for: a plain base name (no path
 * separators, no dotfile), `.gguf` optional. Throws EngineError('rejected') otherwise.
 */
export function modelIdFromName(name: string): string {
  const id = name.endsWith(MODEL_EXTENSION) ? name.slice(0, -MODEL_EXTENSION.length) : name;
  if (!SAFE_NAME.test(id)) {
    throw new EngineError(
      'rejected',
      `"${name.slice(0, 100)}" is not a usable model name: use letters, digits, '.', '_', '+' or '-' (starting with a letter or digit, at most 200).`,
    );
  }
  return id;
}

export class ModelCatalog {
  private readonly checks = new Map<string, { size: number; mtimeMs: number; check: GgufCheck }>();
  private readonly broken = new Map<string, { size: number; mtimeMs: number; reason: string }>();

  constructor(readonly dir: string) {}

  /** Creates the directory when missing and checks it can be read and written. */
  async ensureDir(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
      await access(this.dir, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (error) {
      throw new EngineError('unreachable', `The models directory ${this.dir} is not usable: ${(error as Error).message}`, { cause: error });
    }
  }

  async list(): Promise<EngineModel[]> {
    await this.ensureDir();
    const names = (await readdir(this.dir)).filter((n) => n.endsWith(MODEL_EXTENSION) && !n.startsWith('.'));
    const models: EngineModel[] = [];
    for (const name of names.sort()) {
      const id = name.slice(0, -MODEL_EXTENSION.length);
      if (!SAFE_NAME.test(id)) continue; // not addressable as a model id
      const file = await this.stat(id);
      if (file && (await this.usable(file)) === undefined) {
        const check = this.checks.get(id)?.check;
        const ranks = check?.ok === true && check.summary.ranks;
        models.push({ id, created: Math.floor(file.mtimeMs / 1000), ownedBy: 'local', ...(ranks ? { kind: 'rerank' as const } : {}) });
      }
    }
    // Forget files that are gone.
    for (const name of this.checks.keys()) if (!names.includes(`${name}${MODEL_EXTENSION}`)) this.checks.delete(name);
    return models;
  }

  /** The file behind a model id; EngineError('model_not_found') when it is absent, invalid or broken. */
  async resolve(id: string): Promise<ModelFile> {
    const file = SAFE_NAME.test(id) ? await this.stat(id) : undefined;
    if (!file) throw new EngineError('model_not_found', `The local engine has no model "${id.slice(0, 200)}".`);
    const problem = await this.usable(file);
    if (problem !== undefined) throw new EngineError('model_not_found', `The local model "${id}" cannot be served: ${problem}.`);
    return file;
  }

  /** Remembers that this version of the file crashed llama.cpp. */
  markBroken(file: ModelFile, reason: string): void {
    this.broken.set(file.id, { size: file.size, mtimeMs: file.mtimeMs, reason });
  }

  pathFor(id: string): string {
    return path.join(this.dir, `${id}${MODEL_EXTENSION}`);
  }

  private async stat(id: string): Promise<ModelFile | undefined> {
    const file = this.pathFor(id);
    try {
      const info = await stat(file);
      if (!info.isFile()) return undefined;
      return { id, path: file, size: info.size, mtimeMs: info.mtimeMs, key: `${file}:${info.size}:${info.mtimeMs}` };
    } catch {
      return undefined;
    }
  }

  /** undefined when the file may be served, else why not. */
  private async usable(file: ModelFile): Promise<string | undefined> {
    const broken = this.broken.get(file.id);
    if (broken && broken.size === file.size && broken.mtimeMs === file.mtimeMs) return broken.reason;
    let cached = this.checks.get(file.id);
    if (!cached || cached.size !== file.size || cached.mtimeMs !== file.mtimeMs) {
      cached = { size: file.size, mtimeMs: file.mtimeMs, check: await checkGgufHeader(file.path) };
      this.checks.set(file.id, cached);
    }
    return cached.check.ok ? undefined : `its GGUF header is invalid (${cached.check.reason})`;
  }
}
