// The usage queue's bound during a long database outage: the oldest entries are
// dropped in steps and counted, nothing else is lost, and what is kept is stored
// once the database answers again. A database stand-in that fails on demand.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/platform/db/database.js';
import { UsageRecorder, type UsageEntry } from '../../src/areas/llm/usage/recorder.js';
import { startGateway } from '../helpers/gateway.js';

const MAX_PENDING = 50_000;

function entry(i: number): UsageEntry {
  return {
    tenantId: 'ten_x',
    principalKind: 'apiKey',
    principalId: `p${i}`,
    endpoint: 'chat/completions',
    model: 'm',
    nodeId: null,
    stream: false,
    promptTokens: i,
    completionTokens: 0,
    latencyMs: 1,
    status: 'ok',
  };
}

/** The principal ids of a statement's rows: its third parameter, a Postgres array literal of quoted texts. */
const principalIds = (params: string[]): string[] => JSON.parse(`[${params[2]!.slice(1, -1)}]`) as string[];

function failingDatabase() {
  const state = { down: true, stored: [] as string[] };
  const db = {
    async query(_sql: string, params: string[]) {
      if (state.down) throw new Error('database unreachable');
      state.stored.push(...principalIds(params));
      return [];
    },
  } as unknown as Database;
  return { db, state };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('usage recorder under a long outage', () => {
  it('drops the oldest entries in steps of 1 %, counts them, and stores the rest once the database is back', async () => {
    const { db, state } = failingDatabase();
    const recorder = new UsageRecorder(db, 3600);
    try {
      // The first 1,000 start a write that fails; from then on only the timer would retry.
      for (let i = 0; i < 1000; i++) recorder.record(entry(i));
      await tick();
      const total = MAX_PENDING + 1;
      for (let i = 1000; i < total; i++) recorder.record(entry(i));
      assert.equal(recorder.dropped, MAX_PENDING / 100, 'one step of 1 % when the queue was full');

      state.down = false;
      await recorder.flush();
      assert.equal(state.stored.length, total - recorder.dropped, 'everything not dropped is stored');
      assert.equal(state.stored[0], `p${recorder.dropped}`, 'the oldest went first');
      assert.equal(state.stored.at(-1), `p${total - 1}`);
      assert.equal(new Set(state.stored).size, state.stored.length, 'none twice');
    } finally {
      state.down = false;
      await recorder.close();
    }
  });

  it('counts the rows cut when a failed batch goes back to a queue that filled meanwhile', async () => {
    const { db, state } = failingDatabase();
    const recorder = new UsageRecorder(db, 3600);
    try {
      // 1,000 go out in a write that will fail; 49,001 more queue while it is in flight.
      for (let i = 0; i < MAX_PENDING + 1; i++) recorder.record(entry(i));
      await tick();
      assert.equal(recorder.dropped, 1, 'the batch back in front makes 50,001: the oldest is cut, and counted');
      state.down = false;
      await recorder.flush();
      assert.equal(state.stored.length, MAX_PENDING);
      assert.equal(state.stored[0], 'p1');
    } finally {
      state.down = false;
      await recorder.close();
    }
  });
});

/** A database that refuses (SQLSTATE 23514) any batch holding one of `bad`, and can go down after `upFor` statements. */
function refusingDatabase(bad: Set<string>) {
  const state = { statements: 0, upFor: Infinity, stored: [] as string[] };
  const db = {
    async query(_sql: string, params: string[]) {
      if (++state.statements > state.upFor) throw new Error('database unreachable');
      const ids = principalIds(params);
      if (ids.some((id) => bad.has(id))) throw Object.assign(new Error('new row violates check constraint'), { code: '23514' });
      state.stored.push(...ids);
      return [];
    },
  } as unknown as Database;
  return { db, state };
}

describe('usage recorder and rows the database refuses', () => {
  it('finds the refused rows by halving the batch, drops and counts them, and stores the rest once each', async () => {
    const bad = new Set(['p17', 'p18', 'p700']);
    const { db, state } = refusingDatabase(bad);
    const errors: Error[] = [];
    const recorder = new UsageRecorder(db, 3600, (error) => errors.push(error));
    try {
      for (let i = 0; i < 1000; i++) recorder.record(entry(i));
      await recorder.flush();
      assert.equal(recorder.refused, 3);
      assert.equal(recorder.dropped, 0);
      assert.equal(state.stored.length, 997);
      assert.equal(new Set(state.stored).size, 997, 'none twice');
      assert.ok(!state.stored.some((id) => bad.has(id)));
      assert.ok(state.statements < 70, `${state.statements} statements to find 3 rows among 1,000`);
      assert.equal(errors.length, 3);
      assert.match(errors[0]!.message, /refused by the database and dropped/);

      // Nothing waits behind them: the next entries go out with one statement.
      const before = state.statements;
      for (let i = 1000; i < 1010; i++) recorder.record(entry(i));
      await recorder.flush();
      assert.equal(state.statements, before + 1);
      assert.equal(state.stored.length, 1007);
    } finally {
      await recorder.close();
    }
  });

  it('keeps the rows not stored yet when the database goes down while refused rows are being found', async () => {
    const { db, state } = refusingDatabase(new Set(['p900']));
    const recorder = new UsageRecorder(db, 3600);
    try {
      for (let i = 0; i < 1000; i++) recorder.record(entry(i));
      state.upFor = 4; // the batch fails, then its halves go 0–499 (stored) and 500–999 (fails), then 500–749 (stored); then down
      await recorder.flush();
      assert.equal(state.stored.length, 750);
      state.upFor = Infinity;
      await recorder.flush();
      assert.equal(recorder.refused, 1);
      assert.equal(state.stored.length, 999);
      assert.equal(new Set(state.stored).size, 999, 'none twice');
    } finally {
      await recorder.close();
    }
  });
});

describe('usage recorder on the real database', () => {
  it('stores every value exactly, whatever characters a text holds', async () => {
    const gw = await startGateway();
    const recorder = new UsageRecorder(gw.ctx.db, 3600);
    try {
      const awkward = ['say "hi"', 'back\\slash', 'a,b', '{braces}', 'NULL', '', '  spaced  ', 'ünïcødé ✓', 'tab\there', 'line\nbreak'];
      const at = new Date('2026-11-22T12:34:56.789Z');
      for (const [i, model] of awkward.entries()) {
        recorder.record({
          tenantId: 'ten_awkward',
          principalKind: 'user',
          principalId: `usr_${i}`,
          endpoint: 'chat/completions',
          model,
          nodeId: i % 2 ? null : model,
          stream: i % 2 === 0,
          promptTokens: i,
          completionTokens: 2 * i,
          latencyMs: 1.6,
          status: 'ok',
          correlationId: model,
          at,
        });
      }
      // The same value again: its written form is shared, and it still goes in.
      recorder.record({
        tenantId: 'ten_awkward',
        principalKind: 'apiKey',
        principalId: 'usr_0',
        customerId: 'say "hi"',
        endpoint: 'chat/completions',
        model: 'say "hi"',
        nodeId: null,
        stream: false,
        promptTokens: 0,
        completionTokens: 0,
        latencyMs: 0,
        status: 'ok',
        at,
      });
      await recorder.flush();
      const rows = await gw.ctx.db.query<Record<string, unknown>>(
        `SELECT * FROM usage_records WHERE tenant_id = 'ten_awkward' ORDER BY id`,
      );
      assert.equal(rows.length, awkward.length + 1);
      awkward.forEach((model, i) => {
        const row = rows[i]!;
        assert.equal(row.model, model);
        assert.equal(row.correlation_id, model);
        assert.equal(row.node_id, i % 2 ? null : model);
        assert.equal(row.customer_id, null);
        assert.equal(row.stream, i % 2 === 0);
        assert.equal(row.prompt_tokens, i);
        assert.equal(row.completion_tokens, 2 * i);
        assert.equal(row.latency_ms, 2);
        assert.equal((row.created_at as Date).getTime(), at.getTime());
      });
      const last = rows.at(-1)!;
      assert.deepEqual([last.principal_kind, last.customer_id, last.model, last.correlation_id], ['apiKey', 'say "hi"', 'say "hi"', null]);
    } finally {
      await recorder.close();
      await gw.close();
    }
  });
});
