// The SCIM filter and PATCH machinery on its own (src/areas/auth/scim/filter.ts,
// patch.ts): what a list filter accepts and refuses, how PATCH paths read, and how
// operations change a document, without a gateway.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ScimError } from '../../../src/areas/auth/scim/errors.js';
import { comparisons, parseFilter } from '../../../src/areas/auth/scim/filter.js';
import { applyPatch, parsePath, patchOperations } from '../../../src/areas/auth/scim/patch.js';
import { USER_FILTERS, USER_SHAPE } from '../../../src/areas/auth/scim/users.js';
import { GROUP_SHAPE } from '../../../src/areas/auth/scim/groups.js';
import { SCHEMA } from '../../../src/areas/auth/scim/protocol.js';

const scimType = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ScimError, String(error));
    return error.scimType;
  }
  return 'no error';
};

describe('SCIM filters', () => {
  it('reads eq comparisons joined by and, in any case, with JSON string escapes and schema URNs', () => {
    assert.deepEqual(parseFilter('userName eq "a\\"b@c.example" AND externalId Eq "X1"', USER_FILTERS, SCHEMA.user), [
      { attribute: 'userName', value: 'a"b@c.example' },
      { attribute: 'externalId', value: 'X1' },
    ]);
    assert.deepEqual(parseFilter(`${SCHEMA.user}:emails.VALUE eq "x@y.example"`, USER_FILTERS, SCHEMA.user), [
      { attribute: 'emails.value', value: 'x@y.example' },
    ]);
    assert.deepEqual(comparisons('primary eq True and type eq "work"'), [
      { attribute: 'primary', value: true },
      { attribute: 'type', value: 'work' },
    ]);
  });

  it('refuses everything else as invalidFilter', () => {
    for (const filter of [
      'userName ne "a"',
      'userName eq "a" or userName eq "b"',
      'userName eq "a" and (externalId eq "b")',
      'nickName eq "a"',
      'userName eq 1',
      'userName eq',
      'eq "a"',
      '"userName" eq "a"',
      `userName eq "${'x'.repeat(2100)}"`,
      Array.from({ length: 11 }, () => 'userName eq "a"').join(' and '),
    ])
      assert.equal(
        scimType(() => parseFilter(filter, USER_FILTERS, SCHEMA.user)),
        'invalidFilter',
        filter.slice(0, 60),
      );
  });
});

describe('SCIM PATCH', () => {
  const user = {
    schemas: [SCHEMA.user],
    userName: 'u@x.example',
    emails: [{ value: 'u@x.example', type: 'work', primary: true }],
    active: true,
  };

  it('reads paths: attributes, sub-attributes, value filters and extension URNs', () => {
    assert.deepEqual(parsePath('NAME.givenname', USER_SHAPE), { segments: ['name', 'givenName'] });
    assert.deepEqual(parsePath(`${SCHEMA.user}:userName`, USER_SHAPE), { segments: ['userName'] });
    assert.deepEqual(parsePath(`${SCHEMA.enterpriseUser}:manager.value`, USER_SHAPE), {
      segments: [SCHEMA.enterpriseUser, 'manager', 'value'],
    });
    assert.deepEqual(parsePath('emails[type eq "work"].value', USER_SHAPE), {
      segments: ['emails', 'value'],
      filter: [{ attribute: 'type', value: 'work' }],
    });
    for (const path of ['emails[type eq "work"', 'urn:example:other:attr', '1abc', 'a..b'])
      assert.equal(
        scimType(() => parsePath(path, USER_SHAPE)),
        'invalidPath',
        path,
      );
  });

  it('normalises operations: op in any case, Operations in any case; refuses what is not one', () => {
    assert.deepEqual(patchOperations({ operations: [{ OP: 'Replace', Path: 'active', Value: false }] }), [
      { op: 'replace', path: 'active', value: false },
    ]);
    assert.equal(
      scimType(() => patchOperations({ Operations: [{ op: 'copy' }] })),
      'invalidSyntax',
    );
    assert.equal(
      scimType(() => patchOperations({ Operations: [] })),
      'invalidSyntax',
    );
  });

  it('applies replace, add and remove as Okta and Entra send them, to a copy of the document', () => {
    const ops = patchOperations({
      Operations: [
        { op: 'replace', value: { active: false, 'name.givenName': 'Bo' } },
        { op: 'add', path: 'emails[type eq "home"].value', value: 'home@x.example' },
        { op: 'replace', path: 'emails[type eq "work"].value', value: 'new@x.example' },
        { op: 'add', path: `${SCHEMA.enterpriseUser}:department`, value: 'R&D' },
      ],
    });
    const patched = applyPatch(user, ops, USER_SHAPE, 'usr_1');
    assert.equal(patched.active, false);
    assert.deepEqual(patched.name, { givenName: 'Bo' });
    assert.deepEqual(patched.emails, [
      { value: 'new@x.example', type: 'work', primary: true },
      { type: 'home', value: 'home@x.example' },
    ]);
    assert.deepEqual(patched[SCHEMA.enterpriseUser], { department: 'R&D' });
    assert.equal(user.active, true, 'the original is untouched');
  });

  it('removes only the members a value list or a filter names, and de-duplicates added ones', () => {
    const group = { displayName: 'g', members: [{ value: 'u1' }, { value: 'u2' }, { value: 'u3' }] };
    const apply = (...Operations: object[]) => applyPatch(group, patchOperations({ Operations }), GROUP_SHAPE, 'grp_1').members;
    assert.deepEqual(apply({ op: 'remove', path: 'members', value: [{ value: 'u2' }] }), [{ value: 'u1' }, { value: 'u3' }]);
    assert.deepEqual(apply({ op: 'remove', path: 'members[value eq "u1"]' }), [{ value: 'u2' }, { value: 'u3' }]);
    assert.deepEqual(apply({ op: 'add', path: 'members', value: [{ value: 'u1' }, { value: 'u4' }] }), [
      { value: 'u1' },
      { value: 'u2' },
      { value: 'u3' },
      { value: 'u4' },
    ]);
    assert.equal(apply({ op: 'remove', path: 'members' }), undefined);
  });

  it('refuses read-only attributes (mutability), unknown ones (invalidPath) and a path-less remove (noTarget)', () => {
    const type = (operation: object) => scimType(() => applyPatch(user, patchOperations({ Operations: [operation] }), USER_SHAPE, 'usr_1'));
    assert.equal(type({ op: 'add', path: 'roles', value: [{ value: 'admin' }] }), 'mutability');
    assert.equal(type({ op: 'replace', value: { groups: [] } }), 'mutability');
    assert.equal(type({ op: 'replace', path: 'meta.created', value: 'x' }), 'mutability');
    assert.equal(type({ op: 'replace', path: 'shoeSize', value: 42 }), 'invalidPath');
    assert.equal(type({ op: 'remove' }), 'noTarget');
    assert.equal(type({ op: 'replace', path: 'active' }), 'invalidValue');
    // The resource's own id beside the attributes (Okta) is no change.
    assert.equal(type({ op: 'replace', value: { id: 'usr_1', active: false } }), 'no error');
  });
});
