import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { MEDIA_TYPES } from '../../src/areas/os/documents/media-types.js';
import { ExtractionError, ExtractorPool, type PoolOptions } from '../../src/areas/os/ingestion/extractor.js';
import * as samples from '../helpers/documents.js';
import { eventually } from '../helpers/eventually.js';

const options: PoolOptions = {
  size: 2,
  timeoutMs: 60_000,
  maxMemoryMb: 256,
  maxExpandedBytes: 16 * 1024 ** 2,
  chunkTokens: 200,
  chunkOverlapTokens: 30,
};
const markdown = (i: number) => Buffer.from(`# Doc ${i}\n\n${samples.prose(i, 6)}\n`);

async function rejectsWith(promise: Promise<unknown>, code: ExtractionError['code'], permanent = true) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ExtractionError, String(error));
    assert.equal(error.code, code, error.message);
    assert.equal(error.permanent, permanent);
    return true;
  });
}

/** Nice values of this process's threads (Linux), to see the workers' lowered priority. */
function threadNiceness(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, may hold spaces); nice is field 19.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('extraction worker pool', () => {
  it('reuses its workers across documents, never more than `size` at once', async () => {
    const pool = new ExtractorPool(options);
    try {
      const first = await pool.extract(markdown(1), MEDIA_TYPES.markdown, 'one.md');
      assert.equal(first.title, 'Doc 1');
      const [thread] = pool.threads;
      await pool.extract(markdown(2), MEDIA_TYPES.markdown, 'two.md');
      assert.deepEqual(pool.threads, [thread], 'the second document ran on the same thread');

      const docs = await Promise.all([3, 4, 5, 6, 7].map((i) => pool.extract(markdown(i), MEDIA_TYPES.markdown, `${i}.md`)));
      assert.deepEqual(
        docs.map((d) => d.title),
        ['Doc 3', 'Doc 4', 'Doc 5', 'Doc 6', 'Doc 7'],
        'each answer reaches its own document',
      );
      assert.equal(pool.threads.length, 2);
      if (process.platform === 'linux') assert.equal(threadNiceness().filter((n) => n === 10).length, 2, 'both workers run at nice 10');
      // A failure the file causes (permanent) leaves the worker in the pool.
      await rejectsWith(pool.extract(samples.malformedPdf(), MEDIA_TYPES.pdf, 'bad.pdf'), 'malformed');
      assert.equal(pool.threads.length, 2);
    } finally {
      await pool.close();
    }
    assert.equal(pool.threads.length, 0);
  });

  it('stops a worker past the deadline (timeout) or out of heap (out_of_memory) and replaces it', async () => {
    const slow = new ExtractorPool({ ...options, size: 1, timeoutMs: 1 });
    try {
      const pending = slow.extract(await samples.longPdf(20), MEDIA_TYPES.pdf, 'long.pdf');
      const [thread] = slow.threads;
      await rejectsWith(pending, 'timeout');
      assert.equal(thread!.threadId, -1, 'the worker is gone');
      assert.equal(slow.threads.length, 0);
    } finally {
      await slow.close();
    }

    const small = new ExtractorPool({ ...options, size: 1, maxMemoryMb: 16 });
    try {
      // The decoded text alone is more than a 16 MB heap can hold.
      const huge = Buffer.from(`# Big\n\n${'All work and no play makes Jack a dull boy. '.repeat(1_000_000)}`);
      await rejectsWith(small.extract(huge, MEDIA_TYPES.markdown, 'huge.md'), 'out_of_memory');
      assert.equal(small.threads.length, 0, 'the dead worker left the pool (the next document starts a fresh one)');
    } finally {
      await small.close();
    }
  });

  it('a worker that dies fails only its document (crashed, retryable)', async () => {
    const pool = new ExtractorPool({ ...options, size: 1 });
    try {
      const doomed = pool.extract(await samples.longPdf(30), MEDIA_TYPES.pdf, 'long.pdf');
      const waiting = pool.extract(markdown(9), MEDIA_TYPES.markdown, 'waiting.md');
      await pool.threads[0]!.terminate();
      await rejectsWith(doomed, 'crashed', false);
      assert.equal((await waiting).title, 'Doc 9', 'the document queued behind it is extracted');
    } finally {
      await pool.close();
    }
  });

  it('closes workers idle for idleMs; close() fails documents in flight', async () => {
    const pool = new ExtractorPool({ ...options, idleMs: 100 });
    await pool.extract(markdown(10), MEDIA_TYPES.markdown, 'a.md');
    const [thread] = pool.threads;
    // The idle worker stops (its threadId becomes -1 when it has exited).
    await eventually('the idle worker stopped', () => pool.threads.length === 0 && thread!.threadId === -1, 30_000);
    assert.equal((await pool.extract(markdown(11), MEDIA_TYPES.markdown, 'b.md')).title, 'Doc 11', 'and started again on demand');

    const inFlight = pool.extract(await samples.longPdf(30), MEDIA_TYPES.pdf, 'long.pdf');
    await pool.close();
    await rejectsWith(inFlight, 'crashed', false);
    await rejectsWith(pool.extract(markdown(12), MEDIA_TYPES.markdown, 'c.md'), 'crashed', false);
    assert.equal(pool.threads.length, 0);
  });

  it('an idle worker does not keep the process alive (its output is not piped)', async () => {
    const extractor = new URL('../../src/areas/os/ingestion/extractor.ts', import.meta.url).href;
    const script = `
      const { ExtractorPool } = await import(${JSON.stringify(extractor)});
      const pool = new ExtractorPool(${JSON.stringify({ ...options, idleMs: 600_000 })});
      const doc = await pool.extract(Buffer.from('# Kept\\n\\nA line.'), 'text/markdown', 'a.md');
      process.stdout.write(doc.title);`;
    // The idle timeout is 10 minutes: a process that exits before the deadline (a guard
    // against a hang, far shorter) did not wait for it.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 120_000,
    });
    assert.equal(stdout, 'Kept');
    assert.equal(stderr, '');
  });
});
