// Regression: a user disabled while their account state was being read must not
// stay enabled in the cache for the whole TTL (the read predates the disable).
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
});
