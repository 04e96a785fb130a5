// SCIM Groups (RFC 7643 §4.2) of the token's tenant: a display name (unique in the
// tenant, compared case-insensitively: it is what the SSO role mapping names), an
// externalId, and members, which are the tenant's SCIM users and nothing else. A
// membership change asks the role-mapping seam (roleForGroups) for each user it touches.
import type { Principal } from '../../../platform/identity.js';
import { isUniqueViolation } from '../../../platform/db/database.js';
import { isId, newId } from '../../../platform/ids.js';
import type { Queryable } from '../../../platform/db/database.js';
import { invalidValue, resourceNotFound, uniqueness } from './errors.js';
import { applyPatch, canonical, field, patchOperations, type ResourceShape, type ScimDocument } from './patch.js';
import { parseFilter } from './filter.js';
import { SCHEMA, SCIM_LIMITS } from './protocol.js';
import { scimRepository, type GroupFilter, type GroupRow, type MemberRow } from './repository.js';
import { lineOf, listResponse, pagingOf, requireSchema, scimTenant } from './resource.js';
import type { BaseUrl, ScimDeps } from './users.js';

export const GROUP_SHAPE: ResourceShape = {
  core: SCHEMA.group,
  extensions: [],
  writable: ['displayName', 'externalId', 'members'],
  readOnly: ['id', 'meta', 'schemas'],
  multiValued: ['members'],
  names: ['displayName', 'externalId', 'members', 'id', 'meta', 'schemas', 'value', 'display', 'type', '$ref'],
};

export const GROUP_FILTERS = ['displayName', 'externalId'] as const;

interface GroupFields {
  display_name: string;
  external_id: string | null;
  memberIds: string[];
}

export function groupResource(row: GroupRow, members: MemberRow[], base: BaseUrl) {
  return {
    schemas: [SCHEMA.group],
    id: row.id,
    displayName: row.display_name,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    members: members.map((m) => ({ value: m.user_id, display: m.username, type: 'User', $ref: `${base}/Users/${m.user_id}` })),
    meta: {
      resourceType: 'Group',
      created: row.created_at.toISOString(),
      lastModified: row.updated_at.toISOString(),
      location: `${base}/Groups/${row.id}`,
    },
  };
}

function documentOf(row: GroupRow, members: MemberRow[]): ScimDocument {
  return {
    schemas: [SCHEMA.group],
    displayName: row.display_name,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    members: members.map((m) => ({ value: m.user_id })),
  };
}

function fieldsOf(doc: ScimDocument): GroupFields {
  const displayName = lineOf(field(doc, 'displayName'), 'displayName');
  if (!displayName || displayName.trim() === '') throw invalidValue('displayName is required: a non-blank string.');
  const members = field(doc, 'members');
  if (members !== undefined && members !== null && !Array.isArray(members)) throw invalidValue('members must be an array.');
  const list = (members as unknown[] | null | undefined) ?? [];
  if (list.length > SCIM_LIMITS.maxMembers) throw invalidValue(`A group has at most ${SCIM_LIMITS.maxMembers} members.`);
  const memberIds = list.map((member, i) => {
    const value = typeof member === 'object' && member !== null ? field(member, 'value') : undefined;
    const type = typeof member === 'object' && member !== null ? field(member, 'type') : undefined;
    if (typeof value !== 'string' || value === '') throw invalidValue(`members[${i}].value must be a user's id.`);
    if (type !== undefined && type !== null && (typeof type !== 'string' || type.toLowerCase() !== 'user'))
      throw invalidValue(`members[${i}]: only users can be members (nested groups are not supported).`);
    return value;
  });
  return { display_name: displayName, external_id: lineOf(field(doc, 'externalId'), 'externalId'), memberIds: [...new Set(memberIds)] };
}

const nameTaken = () => uniqueness('A group with that displayName or externalId already exists.');

async function requireUnique(q: Queryable, tenantId: string, fields: GroupFields, selfId: string | null) {
  if (await scimRepository.groupNameTaken(q, tenantId, fields.display_name, selfId)) throw nameTaken();
  if (fields.external_id !== null && (await scimRepository.groupExternalIdTaken(q, tenantId, fields.external_id, selfId)))
    throw nameTaken();
}

/** Members must be the tenant's SCIM users: an unknown id and another tenant's get the same answer. */
async function requireMembers(q: Queryable, tenantId: string, ids: string[]) {
  const known = await scimRepository.scimUserIds(
    q,
    tenantId,
    ids.filter((id) => isId('user', id)),
  );
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined)
    throw invalidValue(`members: ${JSON.stringify(unknown.slice(0, 100))} is not a user provisioned in this tenant.`);
}

async function existingGroup(q: Queryable, tenantId: string, id: string, forUpdate = false): Promise<GroupRow> {
  const row = isId('scimGroup', id) ? await scimRepository.getGroup(q, tenantId, id, forUpdate) : undefined;
  if (!row) throw resourceNotFound('Group', id);
  return row;
}

/** The users whose groups changed get the role the tenant's mapping gives their groups now (or keep theirs: null). */
async function remapRoles(deps: ScimDeps, tenantId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  const groups = await scimRepository.groupsOfUsers(deps.db, tenantId, userIds);
  for (const userId of userIds) {
    const names = groups.filter((g) => g.user_id === userId).map((g) => g.display_name);
    const role = await deps.roleForGroups(tenantId, names);
    if (role === null) continue;
    const user = await scimRepository.getUser(deps.db, tenantId, userId);
    if (!user) continue;
    // SCIM never grants platform_admin; one the user holds already is kept.
    const roles = [role, ...(user.roles.includes('platform_admin') ? ['platform_admin' as const] : [])];
    if (roles.length === user.roles.length && roles.every((r) => user.roles.includes(r))) continue;
    await scimRepository.setRoles(deps.db, tenantId, userId, roles);
    await deps.bus.publish({ kind: 'user', id: userId });
  }
}

function conflictOnUniqueViolation(error: unknown): never {
  if (isUniqueViolation(error)) throw nameTaken();
  throw error;
}

export async function createGroup(deps: ScimDeps, principal: Principal, body: unknown, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  const fields = fieldsOf(canonical(requireSchema(body, SCHEMA.group), GROUP_SHAPE) as ScimDocument);
  let row: GroupRow;
  try {
    row = await deps.db.tx(async (q) => {
      await requireUnique(q, tenantId, fields, null);
      await requireMembers(q, tenantId, fields.memberIds);
      const created = await scimRepository.insertGroup(q, {
        id: newId('scimGroup'),
        tenant_id: tenantId,
        display_name: fields.display_name,
        external_id: fields.external_id,
      });
      await scimRepository.addMembers(q, created.id, fields.memberIds);
      return created;
    });
  } catch (error) {
    conflictOnUniqueViolation(error);
  }
  await remapRoles(deps, tenantId, fields.memberIds);
  return groupResource(row, await scimRepository.members(deps.db, [row.id]), base);
}

export async function getGroup(deps: ScimDeps, principal: Principal, id: string, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  const row = await existingGroup(deps.db, tenantId, id);
  return groupResource(row, await scimRepository.members(deps.db, [row.id]), base);
}

export async function listGroups(
  deps: ScimDeps,
  principal: Principal,
  query: { filter?: string; startIndex?: string; count?: string; excludedAttributes?: string; attributes?: string },
  base: BaseUrl,
) {
  const tenantId = scimTenant(principal);
  const filters: GroupFilter[] = query.filter === undefined ? [] : parseFilter(query.filter, GROUP_FILTERS, SCHEMA.group);
  const paging = pagingOf(query);
  const { total, rows } = await scimRepository.listGroups(deps.db, tenantId, filters, paging.startIndex - 1, paging.count);
  // Members are read only when they are answered (Entra lists with excludedAttributes=members).
  const wanted = membersWanted(query);
  const members =
    wanted && rows.length
      ? await scimRepository.members(
          deps.db,
          rows.map((r) => r.id),
        )
      : [];
  return listResponse(
    rows.map((row) =>
      groupResource(
        row,
        members.filter((m) => m.group_id === row.id),
        base,
      ),
    ),
    total,
    paging,
  );
}

export function membersWanted(query: { excludedAttributes?: string; attributes?: string }): boolean {
  const names = (raw: string | undefined) => (raw ?? '').split(',').map((s) => s.trim().toLowerCase().split(/[.[]/)[0]);
  if (query.attributes !== undefined) return names(query.attributes).includes('members');
  return !names(query.excludedAttributes).includes('members');
}

/** PUT: the body replaces the group, its members included. */
export async function replaceGroup(deps: ScimDeps, principal: Principal, id: string, body: unknown, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  // The id first: another tenant's is 404 whatever the body, as an unknown one is.
  await existingGroup(deps.db, tenantId, id);
  const fields = fieldsOf(canonical(requireSchema(body, SCHEMA.group), GROUP_SHAPE) as ScimDocument);
  return saveGroup(deps, tenantId, id, () => fields, base);
}

/** PATCH: the operations applied to the stored group (members added or removed one by one, or by filter), then saved. */
export async function patchGroup(deps: ScimDeps, principal: Principal, id: string, body: unknown, base: BaseUrl) {
  const tenantId = scimTenant(principal);
  await existingGroup(deps.db, tenantId, id);
  const operations = patchOperations(requireSchema(body, SCHEMA.patchOp));
  return saveGroup(
    deps,
    tenantId,
    id,
    (row, members) => fieldsOf(applyPatch(documentOf(row, members), operations, GROUP_SHAPE, row.id)),
    base,
  );
}

async function saveGroup(
  deps: ScimDeps,
  tenantId: string,
  id: string,
  fieldsFor: (row: GroupRow, members: MemberRow[]) => GroupFields,
  base: BaseUrl,
) {
  let touched: string[] = [];
  let saved: GroupRow;
  try {
    saved = await deps.db.tx(async (q) => {
      // The row lock serialises two PATCHes of one group: each sees the other's members.
      const row = await existingGroup(q, tenantId, id, true);
      const before = await scimRepository.members(q, [row.id]);
      const fields = fieldsFor(row, before);
      await requireUnique(q, tenantId, fields, row.id);
      const had = new Set(before.map((m) => m.user_id));
      const has = new Set(fields.memberIds);
      const added = fields.memberIds.filter((m) => !had.has(m));
      const removed = [...had].filter((m) => !has.has(m));
      await requireMembers(q, tenantId, added);
      await scimRepository.addMembers(q, row.id, added);
      await scimRepository.removeMembers(q, row.id, removed);
      const renamed = fields.display_name !== row.display_name;
      // A new name can change what the role mapping gives every member.
      touched = renamed ? [...new Set([...before.map((m) => m.user_id), ...added])] : [...added, ...removed];
      return (await scimRepository.updateGroup(q, tenantId, row.id, fields)) ?? row;
    });
  } catch (error) {
    conflictOnUniqueViolation(error);
  }
  await remapRoles(deps, tenantId, touched);
  return groupResource(saved, await scimRepository.members(deps.db, [saved.id]), base);
}

export async function deleteGroup(deps: ScimDeps, principal: Principal, id: string): Promise<void> {
  const tenantId = scimTenant(principal);
  const row = await existingGroup(deps.db, tenantId, id);
  const members = await scimRepository.members(deps.db, [row.id]);
  if (!(await scimRepository.deleteGroup(deps.db, tenantId, row.id))) throw resourceNotFound('Group', id);
  await remapRoles(
    deps,
    tenantId,
    members.map((m) => m.user_id),
  );
}
