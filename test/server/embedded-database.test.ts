// If the embedded database thread dies on its own, the owner is told (the server
// then exits for its supervisor) and the data dir's lock is released; a deliberate
// stop is not a crash.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startEmbeddedDatabase, lockHolder } from '../../src/platform/db/embedded.js';
import { freshDatabase } from '../helpers/gateway.js';
import { TEST_TMP } from '../helpers/paths.js';

describe('embedded database thread', { skip: process.env.TEST_DATABASE_URL ? 'embedded database only' : false }, () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function dataDir() {
    const dir = mkdtempSync(path.join(TEST_TMP, 'crash-'));
    dirs.push(dir);
    await freshDatabase(dir);
    return dir;
  }

  it('reports an unexpected exit and frees the data dir', async () => {
    const dir = await dataDir();
    const crashed = new Promise<Error>((resolve) => void startEmbeddedDatabase(dir, resolve).then((db) => db.worker.terminate()));
    const error = await crashed;
    assert.match(error.message, /exited unexpectedly/);
    assert.equal(lockHolder(dir), undefined, 'the lock is released so a restarted server can open the data dir');
  });

  it('does not call a deliberate stop a crash', async () => {
    const dir = await dataDir();
    let crashes = 0;
    const db = await startEmbeddedDatabase(dir, () => crashes++);
    await db.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(crashes, 0);
    assert.equal(lockHolder(dir), undefined);
  });
});

describe('embedded database paths', { skip: process.env.TEST_DATABASE_URL ? 'embedded database only' : false }, () => {
  it('refuses a data dir too long for a Unix socket, naming the variable', async () => {
    const dir = path.join(TEST_TMP, 'x'.repeat(100));
    await assert.rejects(startEmbeddedDatabase(dir), /GATEWAY_DATA_DIR is too long/);
  });
});
