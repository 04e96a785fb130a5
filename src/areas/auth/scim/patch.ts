// PATCH (RFC 7644 §3.5.2) applied to a resource held as a plain SCIM document, as Okta
// and Entra ID send it: `op` in any case (`Replace`), a path-less `add`/`replace` whose
// value object names the attributes (`{"active": false}`, `{"name.givenName": "Bo"}`),
// value paths with a filter (`emails[type eq "work"].value`, `members[value eq "…"]`),
// and a `remove` of `members` with a value list, which removes just those members.
// The caller turns the patched document back into its record with the same checks as
// a PUT, so a PATCH can do nothing a PUT could not.
import { comparisons, type Comparison } from './filter.js';
import { invalidPath, invalidSyntax, invalidValue, mutability, noTarget } from './errors.js';
import { SCIM_LIMITS } from './protocol.js';

export type ScimDocument = Record<string, unknown>;

/** What the patcher must know of a resource type. */
export interface ResourceShape {
  /** The core schema URN: a path may start with it (`urn:…:User:userName`). */
  core: string;
  /** Extension schema URNs: their attributes live in an object under the URN. */
  extensions: readonly string[];
  /** Top-level attributes a PATCH may change, in their canonical case. */
  writable: readonly string[];
  /** Top-level attributes a client may never change (400 mutability): `roles`, `groups`, `id`, `meta`… */
  readOnly: readonly string[];
  /** Multi-valued attributes: an `add` appends to them, a filter selects among them. */
  multiValued: readonly string[];
  /** Every attribute and sub-attribute name in its canonical case, for names written in another. */
  names: readonly string[];
}

export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path?: string;
  value?: unknown;
}

interface ParsedPath {
  /** Attribute names from the top: `['name', 'givenName']`, `['urn:…:enterprise:2.0:User', 'department']`. */
  segments: string[];
  /** The value filter on the first segment (`emails[type eq "work"]`). */
  filter?: Comparison[];
}

const lower = (s: string) => s.toLowerCase();

/** The operations of a PatchOp body, checked and normalised (`op` lowercased). */
export function patchOperations(body: unknown): PatchOperation[] {
  const operations = field(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0) throw invalidSyntax('A PATCH body lists its Operations: a non-empty array.');
  if (operations.length > SCIM_LIMITS.maxOperations) throw invalidSyntax(`A PATCH holds at most ${SCIM_LIMITS.maxOperations} operations.`);
  return operations.map((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidSyntax(`Operations[${i}] is not an object.`);
    const op = field(raw, 'op');
    const path = field(raw, 'path');
    const value = field(raw, 'value');
    if (typeof op !== 'string' || !['add', 'replace', 'remove'].includes(op.toLowerCase()))
      throw invalidSyntax(`Operations[${i}].op must be add, replace or remove.`);
    if (path !== undefined && (typeof path !== 'string' || path.trim() === ''))
      throw invalidPath(`Operations[${i}].path must be a string.`);
    return {
      op: op.toLowerCase() as PatchOperation['op'],
      ...(path !== undefined ? { path: path.trim() } : {}),
      ...(value !== undefined ? { value } : {}),
    };
  });
}

/** A member of an object by name in any case (SCIM names are case-insensitive). */
export function field(object: unknown, name: string): unknown {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return undefined;
  const record = object as Record<string, unknown>;
  if (Object.hasOwn(record, name)) return record[name];
  const key = Object.keys(record).find((k) => lower(k) === lower(name));
  return key === undefined ? undefined : record[key];
}

/** `value` with every object key in its canonical case (`"Value"` → `"value"`), where the shape knows the name. */
export function canonical(value: unknown, shape: ResourceShape): unknown {
  if (Array.isArray(value)) return value.map((v) => canonical(v, shape));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    out[canonicalName(key, shape)] = canonical(inner, shape);
  }
  return out;
}

function canonicalName(name: string, shape: ResourceShape): string {
  const l = lower(name);
  return shape.names.find((n) => lower(n) === l) ?? [shape.core, ...shape.extensions].find((u) => lower(u) === l) ?? name;
}

/** Applies `operations` to a copy of `doc`; throws the SCIM error of the first one that cannot apply. */
export function applyPatch(doc: ScimDocument, operations: PatchOperation[], shape: ResourceShape, id: string): ScimDocument {
  const out = structuredClone(doc);
  for (const operation of operations) applyOne(out, operation, shape, id);
  return out;
}

function applyOne(doc: ScimDocument, { op, path, value }: PatchOperation, shape: ResourceShape, id: string): void {
  if (path === undefined) {
    if (op === 'remove') throw noTarget('A remove names the attribute to remove in its path.');
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw invalidValue(`An ${op} without a path takes an object of attributes as its value.`);
    for (const [key, inner] of Object.entries(value)) {
      // Okta sends the resource's own id (and clients the schemas) beside the attributes.
      if (lower(key) === 'schemas' || (lower(key) === 'id' && inner === id)) continue;
      // An extension's object: each of its attributes, under the extension.
      const extension = shape.extensions.find((u) => lower(u) === lower(key));
      if (extension && isObject(inner)) {
        for (const [sub, subValue] of Object.entries(inner)) applyOne(doc, { op, path: `${extension}:${sub}`, value: subValue }, shape, id);
        continue;
      }
      applyOne(doc, { op, path: key, value: inner }, shape, id);
    }
    return;
  }
  const parsed = parsePath(path, shape);
  const top = parsed.segments[0]!;
  if (shape.readOnly.includes(top)) {
    if (top === 'id' && value === id && op !== 'remove') return;
    throw mutability(`${top} cannot be changed through SCIM.`);
  }
  if (!shape.writable.includes(top) && !shape.extensions.includes(top))
    throw invalidPath(`"${path.slice(0, 200)}" is not an attribute this service provider keeps.`);
  if (op !== 'remove' && value === undefined) throw invalidValue(`An ${op} of ${path.slice(0, 200)} needs a value.`);
  const v = canonical(value, shape);
  if (parsed.filter) applyFiltered(doc, op, parsed, v, shape, path);
  else applyPlain(doc, op, parsed.segments, v, shape);
}

function applyPlain(doc: ScimDocument, op: PatchOperation['op'], segments: string[], value: unknown, shape: ResourceShape): void {
  let parent: Record<string, unknown> = doc;
  for (const segment of segments.slice(0, -1)) {
    const next = parent[segment];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      if (op === 'remove') return;
      parent[segment] = {};
    }
    parent = parent[segment] as Record<string, unknown>;
  }
  const last = segments.at(-1)!;
  const multi = segments.length === 1 && shape.multiValued.includes(last);
  const current = parent[last];
  if (op === 'remove') {
    // `remove members` with a value list removes those members only (never the whole list).
    if (multi && value !== undefined && Array.isArray(current)) {
      const gone = new Set<unknown>(
        asList(value)
          .map((item) => memberValue(item))
          .filter((v) => v !== undefined),
      );
      parent[last] = current.filter((item) => !gone.has(memberValue(item)));
    } else delete parent[last];
    return;
  }
  if (multi) {
    const items = asList(value);
    if (op === 'replace' || !Array.isArray(current)) parent[last] = dedupe(items);
    else parent[last] = dedupe([...current, ...items]);
    return;
  }
  if (op === 'add' && isObject(current) && isObject(value)) parent[last] = { ...current, ...value };
  else parent[last] = value;
}

function applyFiltered(
  doc: ScimDocument,
  op: PatchOperation['op'],
  parsed: ParsedPath,
  value: unknown,
  shape: ResourceShape,
  path: string,
): void {
  const [attr, sub] = parsed.segments as [string, string | undefined];
  if (!shape.multiValued.includes(attr)) throw invalidPath(`${attr} is not multi-valued: a filter cannot select among its values.`);
  if (parsed.segments.length > 2) throw invalidPath(`"${path.slice(0, 200)}" goes deeper than a sub-attribute.`);
  const list = Array.isArray(doc[attr]) ? [...(doc[attr] as unknown[])] : [];
  const matches = (item: unknown) => parsed.filter!.every((c) => same(field(item, c.attribute), c.value));
  const hits = list.filter(matches);
  if (op === 'remove') {
    doc[attr] = sub === undefined ? list.filter((item) => !matches(item)) : list.map((item) => (matches(item) ? without(item, sub) : item));
    return;
  }
  if (sub !== undefined) {
    if (hits.length === 0) {
      // Entra's `replace emails[type eq "work"].value` on a user without one: the value is made.
      const made: Record<string, unknown> = Object.fromEntries(parsed.filter!.map((c) => [canonicalName(c.attribute, shape), c.value]));
      made[sub] = value;
      list.push(made);
    } else for (const item of hits) (item as Record<string, unknown>)[sub] = value;
    doc[attr] = list;
    return;
  }
  if (!isObject(value)) throw invalidValue(`The value for ${path.slice(0, 200)} must be an object.`);
  if (hits.length === 0) {
    if (op === 'replace') throw noTarget(`No value of ${attr} matches the filter in "${path.slice(0, 200)}".`);
    list.push(value);
  }
  doc[attr] = list.map((item) => (matches(item) ? { ...(item as object), ...value } : item));
}

/** `name`, `name.givenName`, `emails[type eq "work"].value`, `urn:…:enterprise:2.0:User:department`. */
export function parsePath(path: string, shape: ResourceShape): ParsedPath {
  let rest = path;
  const prefix: string[] = [];
  if (lower(rest).startsWith('urn:')) {
    const core = `${lower(shape.core)}:`;
    const extension = shape.extensions.find((u) => lower(rest) === lower(u) || lower(rest).startsWith(`${lower(u)}:`));
    if (lower(rest).startsWith(core)) rest = rest.slice(core.length);
    else if (extension) {
      prefix.push(extension);
      rest = rest.slice(extension.length + 1);
      if (rest === '') return { segments: prefix };
    } else throw invalidPath(`"${path.slice(0, 200)}" names a schema this service provider does not keep.`);
  }
  const match = /^([A-Za-z$][\w$-]*)(?:\[(.*)\])?((?:\.[A-Za-z$][\w$-]*)*)$/s.exec(rest);
  if (!match) throw invalidPath(`"${path.slice(0, 200)}" is not an attribute path.`);
  const [, name, filter, subs] = match;
  const segments = [
    ...prefix,
    canonicalName(name!, shape),
    ...(subs
      ? subs
          .slice(1)
          .split('.')
          .map((s) => canonicalName(s, shape))
      : []),
  ];
  if (filter === undefined) return { segments };
  if (prefix.length) throw invalidPath('A filter on an extension attribute is not supported.');
  let parsed: Comparison[];
  try {
    parsed = comparisons(filter);
  } catch (error) {
    throw invalidPath(`The filter in "${path.slice(0, 200)}" cannot be read: ${(error as Error).message}`);
  }
  return { segments, filter: parsed };
}

function same(actual: unknown, expected: unknown): boolean {
  if (typeof expected === 'boolean') return asBoolean(actual) === expected;
  if (typeof expected === 'string' && typeof actual === 'string') return lower(actual) === lower(expected);
  return actual === expected;
}

/** A SCIM boolean as clients send it: `true`, or Entra's `"True"`; undefined for anything else. */
export function asBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return lower(value.trim()) === 'true';
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
const memberValue = (item: unknown): unknown => (isObject(item) ? field(item, 'value') : item);

function without(item: unknown, sub: string): unknown {
  if (!isObject(item)) return item;
  const { [sub]: _gone, ...rest } = item;
  return rest;
}

/** Values of a multi-valued attribute, one per `value` (members added twice are one member). */
function dedupe(items: unknown[]): unknown[] {
  const seen = new Set<unknown>();
  return items.filter((item) => {
    const v = memberValue(item);
    if (v === undefined || typeof v === 'object') return true;
    if (seen.has(v)) return false;
    seen.add(v);
    return true;
  });
}
