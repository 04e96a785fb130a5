// Issue 26: the start banner said `CLI: node bin/gateway.js --help`, the README
// `npx gateway`. The CLI names itself the way that works where it was started.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { invocation } from '../../src/cli/main.js';

describe('how the CLI names itself in hints and the start banner', () => {
  const checkout = '/home/me/gateway';
  it('from a checkout (npm start, node bin/gateway.js, npx gateway): `npx gateway`, as the README says', () => {
    assert.equal(invocation(`${checkout}/bin/gateway.js`, checkout, 'start'), 'npx gateway');
    assert.equal(invocation(`${checkout}/bin/gateway.js`, checkout, undefined), 'npx gateway');
    assert.equal(invocation('/tmp/npx-123/node_modules/.bin/gateway', checkout, 'exec'), 'npx gateway');
  });
  it('on the PATH (npm link, a global install): `gateway`', () => {
    assert.equal(invocation('/usr/local/bin/gateway', '/srv', undefined), 'gateway');
  });
  it('elsewhere: the path that was run', () => {
    assert.equal(invocation(`${checkout}/bin/gateway.js`, '/srv', undefined), 'node ../home/me/gateway/bin/gateway.js');
    assert.equal(invocation(`${checkout}/src/cli/main.ts`, checkout, undefined), 'npx tsx src/cli/main.ts');
  });
});
