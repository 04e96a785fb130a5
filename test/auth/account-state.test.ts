// Regression: a user disabled while their account state was being read must not
// stay enabled in the cache for the whole TTL (the read predates the disable).
// Renew-ahead: a user who keeps working is re-read in the background before the
// entry runs out, once, and never waits for it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AccountStates } from '../../src/areas/auth/users/account-state.js';
import { LocalInvalidationBus } from '../../src/platform/coordination/invalidation-bus.js';
import type { Database } from '../../src/platform/db/database.js';

describe('account state cache', () => {
  it('does not cache a read that overlapped an invalidation', async () => {
    let status = 'active';
    let release!: () => void;
    let gate: Promise<void> = new Promise((resolve) => (release = resolve));
    const stats = { queries: 0 };
    const db = {
      stats,
      async query() {
        stats.queries++;
        const seen = status; // the row as the database had it when the query ran
        await gate;
        return [{ tenant_id: 'ten_a', roles: ['member'], status: seen, tenant_status: 'active' }];
      },
    } as unknown as Database;
    const bus = new LocalInvalidationBus();
    const states = new AccountStates(db, bus);

    const inFlight = states.get('usr_a');
    status = 'disabled';
    await bus.publish({ kind: 'user', id: 'usr_a' }); // the disable commits and invalidates meanwhile
    release();
    assert.equal((await inFlight)?.active, true, 'the overlapping read itself is still answered');

    gate = Promise.resolve();
    assert.equal((await states.get('usr_a'))?.active, false, 'the next request reads again and sees the disable');
    assert.equal(stats.queries, 2);
    assert.equal((await states.get('usr_a'))?.active, false);
    assert.equal(stats.queries, 2, 'a read that did not overlap is cached');
  });

  it('renews a used entry in the background past 80 % of its TTL: one read, no request waits, none after the old end', async () => {
    let status = 'active';
    const stats = { queries: 0 };
    const db = {
      stats,
      async query() {
        stats.queries++;
        return [{ tenant_id: 'ten_a', roles: ['member'], status, tenant_status: 'active' }];
      },
    } as unknown as Database;
    const ttlMs = 400;
    const states = new AccountStates(db, new LocalInvalidationBus(), ttlMs);
    assert.equal((await states.get('usr_a'))?.active, true);
    const loadedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, ttlMs * 0.85));
    status = 'disabled'; // seen by the renewal, not by the requests that start it
    const answers = await Promise.all(Array.from({ length: 20 }, () => states.get('usr_a')));
    assert.ok(
      answers.every((state) => state?.active === true),
      'served from the entry while it is renewed',
    );
    assert.equal(stats.queries, 2, 'one background read for 20 requests');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, loadedAt + ttlMs + 50 - Date.now())));
    assert.equal((await states.get('usr_a'))?.active, false, 'the renewed entry serves after the old one would have run out');
    assert.equal(stats.queries, 2, 'no read at the old end');
  });
});
