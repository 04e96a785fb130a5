import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppError } from '../../src/platform/errors.js';
import { WORD_VECTORS_DIMENSIONS, WordVectorEmbedder } from '../../src/areas/os/embedders/word-vectors/embedder.js';
import { tokenize } from '../../src/areas/os/embedders/word-vectors/pooling.js';
import { TEST_TMP } from '../helpers/paths.js';

const cosine = (x: Float32Array, y: Float32Array) => x.reduce((sum, xi, i) => sum + xi * (y[i] as number), 0);
const norm = (x: Float32Array) => Math.sqrt(cosine(x, x));

/** A small source in the package's layout: out of rank order, with words conversion must drop. */
function writeSmallSource(file: string): string[] {
  const entries: [string, number][] = [
    ['beta', 3],
    ['the', 0],
    ['"', 1],
    ['alpha', 2],
    ['well-known', 4],
    ['x2', 5],
    ['gamma', 6],
    ['delta', 7],
  ];
  const vectors = Object.fromEntries(
    entries.map(([word, rank]) => {
      const vector = Array.from({ length: 100 }, (_, d) => Math.sin(rank * 7 + d) * (d % 3 === 0 ? 2 : 0.5));
      return [word, [...vector, Math.hypot(...vector), rank]];
    }),
  );
  const words = [...entries].sort((x, y) => x[1] - y[1]).map(([word]) => word);
  writeFileSync(
    file,
    JSON.stringify({ precision: 8, l2NormIndex: 100, wordIndex: 101, size: words.length, dimensions: 100, words, vectors }),
  );
  return ['the', 'alpha', 'beta', 'gamma'];
}

describe('os built-in word-vector embedder', () => {
  const root = path.join(TEST_TMP, 'word-vectors');
  let dataDir: string;
  let embedder: WordVectorEmbedder;
  const logged: string[] = [];
  const opened: WordVectorEmbedder[] = [];
  const open = (options: ConstructorParameters<typeof WordVectorEmbedder>[0]) => {
    const made = new WordVectorEmbedder(options);
    opened.push(made);
    return made;
  };

  before(async () => {
    mkdirSync(root, { recursive: true });
    dataDir = mkdtempSync(path.join(root, 'real-'));
    // In the foreground: the real conversion, which a loaded machine would otherwise starve for minutes.
    embedder = open({ dataDir, foreground: true, log: (level, message) => logged.push(`${level} ${message}`) });
    assert.equal(embedder.state, 'idle');
    const readying = embedder.ready();
    assert.equal(embedder.state, 'preparing');
    await readying;
  });
  after(async () => {
    await Promise.all(opened.map((e) => e.close()));
    rmSync(root, { recursive: true, force: true });
  });

  it('converts the package once into the data dir, and a second start reuses the file', async () => {
    assert.equal(embedder.state, 'ready');
    assert.equal(embedder.preparation?.converted, true);
    assert.ok((embedder.preparation?.words ?? 0) >= 150_000, `kept ${embedder.preparation?.words} words`);
    const file = path.join(dataDir, 'embedders', 'word-vectors-en-100d.bin');
    assert.equal(embedder.binaryFile, file);
    const before = statSync(file);
    assert.ok(before.size < 30 * 1024 ** 2, `${before.size} bytes`);

    const again = open({ dataDir });
    await again.ready();
    assert.equal(again.preparation?.converted, false);
    const after = statSync(file);
    assert.equal(after.ino, before.ino);
    assert.equal(after.mtimeMs, before.mtimeMs);
    const [x, y] = await Promise.all([embedder.embed(['annual leave']), again.embed(['annual leave'])]);
    assert.deepEqual(x, y);
    await again.close();
  });

  it('says what the conversion does in a few log lines: starting, its progress by quarters, ready', () => {
    assert.match(
      logged[0] ?? '',
      /^info built-in embedder: converting its word vectors once into .*word-vectors-en-100d\.bin \(not converted yet;/,
    );
    const progress = logged.filter((line) => / % read$/.test(line)).map((line) => Number(/(\d+) % read$/.exec(line)?.[1]));
    assert.ok(progress.length >= 2 && progress.length <= 4, `progress lines: ${progress.join(', ')}`);
    assert.deepEqual(
      progress,
      [...progress].sort((p, q) => p - q),
      'increasing',
    );
    assert.ok(
      progress.every((p) => p % 25 === 0 && p > 0 && p <= 100),
      progress.join(', '),
    );
    assert.match(
      logged.at(-1) ?? '',
      /^info built-in embedder: gateway-word-vectors-en ready, \d+ words \(converted in [\d.]+ s, loaded in [\d.]+ s\)$/,
    );
    assert.ok(logged.length <= 6, logged.join('\n'));
  });

  it('rebuilds a truncated or corrupt file, keeping only plain lowercase words by frequency', async () => {
    const small = mkdtempSync(path.join(root, 'small-'));
    const sourceFile = path.join(small, 'source.json');
    const kept = writeSmallSource(sourceFile);
    const file = path.join(small, 'embedders', 'word-vectors-en-100d.bin');

    const first = open({ dataDir: small, sourceFile, maxWords: 4 });
    await first.ready();
    assert.equal(first.preparation?.converted, true);
    assert.equal(first.preparation?.words, 4);
    const converted = readFileSync(file);
    const words = converted.subarray(converted.length - converted.readUInt32LE(24)).toString('utf8');
    assert.equal(words, kept.map((w) => `${w}\n`).join(''), 'the four most frequent a-z words, in rank order');
    const [reference] = await first.embed(['alpha beta']);
    await first.close();
    const size = statSync(file).size;

    truncateSync(file, size - 10);
    const afterTruncation = open({ dataDir: small, sourceFile, maxWords: 4 });
    await afterTruncation.ready();
    assert.equal(afterTruncation.preparation?.converted, true);
    assert.equal(statSync(file).size, size);
    assert.deepEqual(await afterTruncation.embed(['alpha beta']), [reference]);
    await afterTruncation.close();

    const bytes = readFileSync(file);
    bytes[100] = (bytes[100] as number) ^ 0xff;
    writeFileSync(file, bytes);
    const afterCorruption = open({ dataDir: small, sourceFile, maxWords: 4 });
    await afterCorruption.ready();
    assert.equal(afterCorruption.preparation?.converted, true);
    assert.deepEqual(await afterCorruption.embed(['alpha beta']), [reference]);
    await afterCorruption.close();
  });

  it('scores paraphrases above unrelated sentences', async () => {
    const cases: [string, string, string][] = [
      ['How many vacation days do employees get?', 'Staff receive 25 days of paid annual leave', 'The server room is on the third floor'],
      [
        'When will I be paid back for my travel costs?',
        'Expenses for business trips are reimbursed within 30 days',
        'Passwords must be at least 14 characters long',
      ],
      ['Can I bring my dog to the office?', 'Pets are not allowed in the building', 'Invoices are settled by bank transfer'],
      [
        'What should I do if I am sick?',
        'Employees who are ill must tell their manager before nine',
        'The cafeteria serves lunch from noon',
      ],
    ];
    for (const [question, paraphrase, unrelated] of cases) {
      const [q, p, u] = (await embedder.embed([question, paraphrase, unrelated])) as [Float32Array, Float32Array, Float32Array];
      assert.ok(
        cosine(q, p) > cosine(q, u) + 0.05,
        `${question}: paraphrase ${cosine(q, p).toFixed(3)} vs unrelated ${cosine(q, u).toFixed(3)}`,
      );
    }
  });

  it('gives unit vectors, and a zero vector to a text with no known word', async () => {
    const vectors = await embedder.embed(['Café employees’ handbook', 'qzxv blorptastic 12345', '', '¡¿ ... !!']);
    assert.equal(vectors.length, 4);
    for (const v of vectors) assert.equal(v.length, WORD_VECTORS_DIMENSIONS);
    assert.ok(Math.abs(norm(vectors[0] as Float32Array) - 1) < 1e-5);
    for (const v of vectors.slice(1)) assert.ok(v.every((x) => x === 0));
    assert.deepEqual(await embedder.embed([]), []);
  });

  it('tokenises like the vocabulary: lowercase a-z, accents folded, contractions split', () => {
    assert.deepEqual(tokenize("Don't CAN'T the employee's café, naïve won’t 42x"), [
      'do',
      'not',
      'can',
      'not',
      'the',
      'employee',
      'cafe',
      'naive',
      'will',
      'not',
      'x',
    ]);
  });

  it('never blocks the calling thread, even on a large batch', async () => {
    const sentence = 'The quarterly report shows that revenue grew in every region while costs stayed flat ';
    const chunk = sentence.repeat(20); // ~300 tokens
    const texts = Array.from({ length: 5000 }, (_, i) => `${chunk} ${i}`);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const vectors = await embedder.embed(texts);
    clearInterval(timer);
    assert.equal(vectors.length, texts.length);
    // Counted, not timed: embedding on this thread would let no timer run until the batch
    // is done; in the worker, this thread's loop runs on meanwhile (more ticks the slower the machine).
    assert.ok(embedder.worker, 'the batch went to the worker thread');
    assert.ok(ticks >= 3, `${ticks} ticks of the calling thread's loop during the batch`);
  });

  it('close() ends the worker and fails later calls; a worker that dies is replaced', async () => {
    const other = open({ dataDir });
    await other.ready();
    const firstWorker = other.worker;
    assert.ok(firstWorker);
    await firstWorker.terminate(); // as if it had run out of memory
    assert.equal(other.worker, undefined);
    assert.equal(other.state, 'idle');
    const [v] = await other.embed(['annual leave']);
    assert.equal(other.preparation?.converted, false);
    assert.ok(Math.abs(norm(v as Float32Array) - 1) < 1e-5);

    const worker = other.worker;
    assert.ok(worker && worker !== firstWorker);
    const exited = once(worker, 'exit');
    const inFlight = assert.rejects(
      other.embed(Array.from({ length: 2000 }, () => 'a long enough text to still be running '.repeat(30))),
      (error: AppError) => error.code === 'SERVICE_UNAVAILABLE',
    );
    await new Promise((resolve) => setImmediate(resolve)); // the batch is on its way to the worker
    await other.close();
    await exited;
    assert.equal(other.worker, undefined);
    await inFlight;
    await assert.rejects(other.embed(['x']), (error: AppError) => error.code === 'SERVICE_UNAVAILABLE');
  });

  it('close() during a conversion stops it and leaves no file behind', async () => {
    const small = mkdtempSync(path.join(root, 'stopped-'));
    const sourceFile = path.join(small, 'source.json');
    writeSmallSource(sourceFile);
    const stopped = open({ dataDir: small, sourceFile });
    const readying = assert.rejects(stopped.ready(), /it was closed/);
    assert.equal(stopped.stage, 'loading');
    while (stopped.stage === 'loading') await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(stopped.stage, 'converting');
    await stopped.close();
    await readying;
    // Converting this source takes ~1 s; a child that outlived close() would have written its file by now.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.deepEqual(readdirSync(small), ['source.json']);
  });

  it('fails clearly when the source cannot be converted', async () => {
    const broken = open({ dataDir: mkdtempSync(path.join(root, 'broken-')), sourceFile: path.join(root, 'no-such-file.json') });
    await assert.rejects(broken.ready(), /Converting the word vectors failed: .*ENOENT/);
    assert.equal(broken.state, 'failed');
    assert.match(broken.error?.message ?? '', /ENOENT/);
    await assert.rejects(broken.embed(['x']), (error: AppError) => error instanceof AppError && error.code === 'SERVICE_UNAVAILABLE');
  });
});
