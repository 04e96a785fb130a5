// What `gateway keys create` prints for people (the JSON output is covered in
// keys-create.test.ts): every line says something; issue 26 found an empty `scopes:` line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { keyCommands } from '../../src/cli/keys.js';

const create = keyCommands.find((command) => command.name === 'keys create')!;
const created = {
  id: 'key_01',
  key: 'rdk_example',
  name: 'laptop',
  tenantId: 'ten_01',
  maskedKey: 'rdk_exam…mple',
  expiresAt: null,
  customerId: null,
};

describe('keys create, as printed', () => {
  it('says a key made without --scopes has none, instead of an empty scopes line', () => {
    const lines = create.describe!({ ...created, scopes: '[]' });
    assert.ok(lines.includes('  scopes: none'), lines.join('\n'));
    assert.deepEqual(
      lines.filter((line) => /^\s+\w+:\s*$/.test(line)),
      [],
      'no field line without a value',
    );
  });

  it('lists the scopes a key was given', () => {
    const lines = create.describe!({ ...created, scopes: '["read","write"]' });
    assert.ok(lines.includes('  scopes: read, write'), lines.join('\n'));
  });
});
