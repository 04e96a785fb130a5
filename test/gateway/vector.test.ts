// Without pgvector (PostgreSQL here has none packaged) the gateway still starts,
// warns exactly once, and /health says so; the embedded database always has it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { PassThrough } from 'node:stream';
import { createContext } from '../../src/context.js';
import { startServer } from '../../src/server/start.js';

describe('edge: database kind and pgvector', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.close());

  it('reports the database kind and whether vectors are available on /health', async () => {
    const health = await gw.request('GET', '/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.database.kind, process.env.TEST_DATABASE_URL ? 'postgres' : 'embedded');
    assert.equal(health.body.database.vector, gw.ctx.vector ? 'available' : 'unavailable');
    if (gw.ctx.db.kind === 'embedded') assert.equal(gw.ctx.vector, true, 'the embedded database ships pgvector');
  });

  it('a start on the same database warns about missing pgvector exactly once, and only when it is missing', async (t) => {
    if (gw.ctx.db.kind === 'embedded') {
      // The data dir is locked by the running gateway; a second start there is refused by design.
      await assert.rejects(createContext(gw.ctx.config), /in use by process/);
      t.diagnostic('embedded: pgvector present (asserted above), no warning applies');
      return;
    }
    const lines: string[] = [];
    const second = await startServer(
      { ...gw.ctx.config, host: '127.0.0.1', port: 0 },
      { print: (line) => lines.push(line), logStream: new PassThrough() },
    );
    try {
      const warnings = lines.filter((line) => /WARNING/.test(line) && /pgvector/i.test(line));
      assert.equal(warnings.length, second.ctx.vector ? 0 : 1, lines.join('\n'));
      assert.equal(second.ctx.vector, gw.ctx.vector);
    } finally {
      await second.close();
    }
  });
});
