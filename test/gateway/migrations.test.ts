// Migrations marked `-- requires: vector` are applied where pgvector exists and
// held back (not recorded, so a later start applies them) where it does not.
// The embedded run exercises the first path, the PostgreSQL run in CI the second.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { TEST_TMP } from '../helpers/paths.js';

describe('migrations needing pgvector', () => {
  let gw: TestGateway;
  let dir: string;

  before(async () => {
    gw = await startGateway();
    dir = mkdtempSync(path.join(TEST_TMP, 'migrations-'));
    writeFileSync(path.join(dir, '9001_plain.sql'), 'CREATE TABLE migration_probe_plain (id int);');
    writeFileSync(path.join(dir, '9002_vectors.sql'), '-- requires: vector\nCREATE TABLE migration_probe_vectors (embedding vector(3));');
  });
  after(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies them with pgvector, holds them back without, and never records a held-back one', async () => {
    const folder = pathToFileURL(dir + path.sep);
    const first = await migrate(gw.ctx.db, () => {}, folder);
    assert.equal(first.vector, gw.ctx.vector);
    assert.deepEqual(first.applied, first.vector ? ['9001_plain', '9002_vectors'] : ['9001_plain']);
    assert.deepEqual(first.heldBack, first.vector ? [] : ['9002_vectors']);

    const recorded = await gw.ctx.db.query<{ version: string }>(
      "SELECT version FROM schema_migrations WHERE version LIKE '900%' ORDER BY version",
    );
    assert.deepEqual(
      recorded.map((r) => r.version),
      first.applied,
    );

    const again = await migrate(gw.ctx.db, () => {}, folder);
    assert.deepEqual(again.applied, [], 'nothing is applied twice');
    assert.deepEqual(again.heldBack, first.heldBack, 'a held-back migration waits for pgvector');
  });
});
