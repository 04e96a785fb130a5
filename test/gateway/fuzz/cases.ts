// Fuzz cases generated from the gateway's route table: for every route and each of
// three credentials (none, an API key, a platform + tenant admin's access token; on the
// SCIM routes a SCIM token in place of the API key), a
// seeded mix of valid bodies, one-field mutations, hostile whole bodies, prototype
// keys, odd content types, malformed JSON, path variants and odd headers.
import type { RouteSummary } from '../../../src/gateway/fastify-types.js';
import type { Rng } from './prng.js';
import { toJsonText, withProtoKey, POISON } from './json-text.js';
import { fieldPaths, hostileValue, setAt, validValue, type Hint, type Schema } from './schema-values.js';
import { bodyVariant, malformedJson, pathVariant, headerVariant, garbageId } from './variants.js';
import { specialCases } from './specials.js';

export type CredentialKind = 'none' | 'apiKey' | 'adminJwt' | 'scimToken';
export const CREDENTIALS: CredentialKind[] = ['none', 'apiKey', 'adminJwt'];
/** The SCIM routes take a SCIM token and nothing else: the admin's token is there to be refused. */
const SCIM_CREDENTIALS: CredentialKind[] = ['none', 'scimToken', 'adminJwt'];
const credentialsOf = (route: RouteSummary) => (route.access === 'scim' ? SCIM_CREDENTIALS : CREDENTIALS);

/** What the fuzz acts on and with. Ids are of throwaway records, so a valid PATCH or DELETE cannot take the fuzz's own credentials away. */
export interface Fixture {
  /** The tenant of the API key and of the admin. */
  tenantA: string;
  /** A throwaway tenant: routes that take a tenant id change this one (a valid PATCH may disable it). */
  tenantB: string;
  apiKey: string;
  adminJwt: string;
  /** Tenant A's SCIM token. */
  scimToken: string;
  /** Throwaway user and key of tenant B; workspace, collection and document of tenant A; API-created node. */
  ids: {
    userId: string;
    keyId: string;
    workspaceId: string;
    collectionId: string;
    documentId: string;
    nodeId: string;
    /** The platform-kept history: the admin's conversation; the key's thread, a message in it, and an assistant. */
    conversationId: string;
    threadId: string;
    messageId: string;
    assistantId: string;
    /** A throwaway user and group tenant A's SCIM token provisioned (a valid DELETE may remove them). */
    scimUserId: string;
    scimGroupId: string;
  };
  /** A loopback address nobody listens on: pulls and node health checks fail at once, nothing leaves the machine. */
  closedUrl: string;
  /** A model the fake engine serves. */
  chatModel: string;
}

export interface FuzzCase {
  /** Position in the generated sequence (the same for the same seed). */
  n: number;
  /** The route-table entry it came from, "METHOD /url", or "special". */
  route: string;
  credential: CredentialKind | 'n/a';
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent chunked, with no Content-Length. */
  chunks?: Buffer[];
  /** Written to a socket byte for byte (requests node:http refuses to send); host and port are the gateway's. */
  raw?: (host: string) => Buffer;
  /** What is odd about the input, in a few words. */
  input: string;
  /** A specific answer this input must get, and why. */
  expect?: { statuses: number[]; why: string };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `total` cases (plus the specials), spread over routes and credentials by weight, in a seeded order. */
export function* generateCases(routes: RouteSummary[], fx: Fixture, rng: Rng, total: number): Generator<FuzzCase> {
  const pairs = routes.flatMap((route) =>
    credentialsOf(route).map((credential) => ({ route, credential, weight: weightOf(route, credential) })),
  );
  const sum = pairs.reduce((s, p) => s + p.weight, 0);
  const schedule: (number | 'special')[] = [];
  pairs.forEach((p, i) => {
    for (let k = Math.max(2, Math.round((total * p.weight) / sum)); k > 0; k--) schedule.push(i);
  });
  const specials = specialCases(fx);
  for (let i = 0; i < specials.length; i++) schedule.push('special');
  shuffle(schedule, rng);
  let n = 0;
  let nextSpecial = 0;
  for (const entry of schedule) {
    n++;
    if (entry === 'special') yield { ...specials[nextSpecial++]!, n };
    else yield routeCase(pairs[entry]!.route, pairs[entry]!.credential, fx, rng, n);
  }
}

// Routes with a body get most of the cases; a protected route without a credential
// stops at the edge with a 401, and the removed endpoint answers 410 to anything.
function weightOf(route: RouteSummary, credential: CredentialKind): number {
  let weight = route.schema.body ? 3 : 1;
  if (credential === 'none' && route.access !== 'public') weight *= 0.4;
  if (credential === 'adminJwt' && route.access === 'scim') weight *= 0.4;
  if (route.url === '/api/llm/v1/chat/stream') weight *= 0.3;
  return weight;
}

function shuffle<T>(items: T[], rng: Rng): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

function routeCase(route: RouteSummary, credential: CredentialKind, fx: Fixture, rng: Rng, n: number): FuzzCase {
  const auth = credentialHeaders(credential, fx, rng);
  const engine = rng.pick(['ollama', 'local', 'local', 'openai']);
  const base: FuzzCase = {
    n,
    route: `${route.method} ${route.url}`,
    credential,
    method: route.method,
    path: fillParams(route, fx, rng, engine, false),
    headers: { ...auth.headers },
    input: auth.label,
  };
  const bodySchema = route.schema.body as Schema | undefined;
  const hint = hintsFor(route, fx, rng, engine);
  const takesBody = BODY_METHODS.has(route.method);
  const roll = rng.next();

  if (takesBody && roll < 0.1) return poisonedCase(base, route, bodySchema, hint, rng);
  if (roll < 0.25 && route.url !== '*') {
    const variant = rng.chance(0.6) ? pathVariant(fillParams(route, fx, rng, engine, true), rng) : headerVariant(rng);
    const body = takesBody && bodySchema ? validValue(bodySchema, 'body', rng, hint) : undefined;
    return withJsonBody(
      {
        ...base,
        path: variant.path ?? base.path,
        headers: { ...base.headers, ...variant.headers },
        input: join(base.input, variant.label),
      },
      body,
      route,
    );
  }
  if (!takesBody) return base;
  if (!bodySchema) {
    // Routes without a body schema still get whatever a client sends: Fastify parses it all the same.
    if (rng.chance(0.4)) return base;
    const hostile = hostileValue({}, rng, () => ({}));
    return withJsonBody({ ...base, input: join(base.input, `body: ${hostile.label}`) }, hostile.value, route);
  }
  const valid = () => validValue(bodySchema, 'body', rng, hint);
  if (roll < 0.35) return withJsonBody({ ...base, input: join(base.input, 'valid body') }, valid(), route);
  if (roll < 0.45) {
    const variant = rng.chance(0.6) ? bodyVariant(toJsonText(valid()).text, rng) : malformedJson(rng);
    return { ...base, headers: { ...base.headers, ...variant.headers }, body: variant.body, input: join(base.input, variant.label) };
  }
  if (roll < 0.5)
    return withJsonBody(
      { ...base, input: join(base.input, 'required field missing or unknown ones added') },
      dropOrAdd(valid(), bodySchema, rng),
      route,
    );
  // The rest: one node of the body replaced by a hostile value.
  const target = rng.pick(fieldPaths(bodySchema));
  const hostile = hostileValue(target.schema, rng, () => validValue(target.schema, target.field, rng, hint));
  return withJsonBody(
    { ...base, input: join(base.input, `${target.field}: ${hostile.label}`) },
    setAt(valid(), target.path, hostile.value),
    route,
  );
}

/** A body that is valid but for a `__proto__` (or `constructor.prototype`) key, top-level or nested. */
function poisonedCase(base: FuzzCase, route: RouteSummary, schema: Schema | undefined, hint: Hint, rng: Rng): FuzzCase {
  const valid = (schema ? validValue(schema, 'body', rng, hint) : {}) as Record<string, unknown>;
  const key = rng.pick(['__proto__', 'constructor'] as const);
  const objects = schema ? fieldPaths(schema).filter((f) => f.schema.type === 'object' && f.path.length > 0) : [];
  const nested = objects.length > 0 && rng.chance(0.3) ? rng.pick(objects) : undefined;
  const body = nested
    ? setAt(valid, nested.path, key === '__proto__' ? POISON.proto : POISON.constructorPrototype)
    : withProtoKey(valid, key);
  return withJsonBody(
    { ...base, input: join(base.input, `"${key}" key ${nested ? `in ${nested.field}` : 'beside valid fields'}`) },
    body,
    route,
  );
}

/**
 * The value as a JSON body. One with a prototype key anywhere must be refused as
 * Fastify's own parser does (400), not handed to a handler; only once the body is
 * read, though: not by a protected route without a credential (401), nor by the
 * removed endpoint (410), which both answer first.
 */
function withJsonBody(c: FuzzCase, value: unknown, route: RouteSummary): FuzzCase {
  if (value === undefined) return c;
  const json = toJsonText(value);
  const stopsAtEdge = route.access === 'scim' ? c.credential !== 'scimToken' : route.access !== 'public' && c.credential === 'none';
  const refused = route.url === '/api/llm/v1/chat/stream' ? [410] : stopsAtEdge ? [401] : [400];
  return {
    ...c,
    headers: { 'content-type': 'application/json', ...c.headers },
    body: Buffer.from(json.text),
    ...(json.poisoned ? { expect: { statuses: refused, why: 'a prototype key is refused' } } : {}),
  };
}

function dropOrAdd(valid: unknown, schema: Schema, rng: Rng): unknown {
  const body = { ...(valid as Record<string, unknown>) };
  const required: string[] = schema.required ?? [];
  if (required.length > 0 && rng.chance(0.5)) delete body[rng.pick(required)];
  else for (let i = 0; i < 50; i++) body[`extra${i}`] = i % 2 ? 'x' : { nested: [i] };
  return body;
}

type Credential = { headers: Record<string, string>; label: string };

function credentialHeaders(kind: CredentialKind, fx: Fixture, rng: Rng): Credential {
  if (kind === 'apiKey') {
    return rng.pick<Credential>([
      { headers: { 'x-api-key': fx.apiKey }, label: 'key in X-API-Key' },
      { headers: { authorization: `Bearer ${fx.apiKey}` }, label: 'key as Bearer' },
      { headers: { 'x-api-key': `  ${fx.apiKey}  ` }, label: 'key padded with spaces' },
    ]);
  }
  if (kind === 'scimToken') {
    return rng.chance(0.85)
      ? { headers: { authorization: `Bearer ${fx.scimToken}` }, label: 'SCIM token' }
      : {
          headers: { authorization: `bearer  ${fx.scimToken}`, 'x-api-key': fx.apiKey },
          label: 'SCIM token, odd scheme case, an API key beside',
        };
  }
  if (kind === 'adminJwt') {
    return rng.chance(0.85)
      ? { headers: { authorization: `Bearer ${fx.adminJwt}` }, label: 'admin token' }
      : { headers: { authorization: `bearer  ${fx.adminJwt}` }, label: 'admin token, odd scheme case' };
  }
  if (rng.chance(0.75)) return { headers: {}, label: 'no credential' };
  return rng.pick<Credential>([
    { headers: { authorization: 'Bearer' }, label: 'Bearer without token' },
    { headers: { authorization: `Bearer ${'a'.repeat(8000)}` }, label: '8,000-char bearer token' },
    { headers: { authorization: `Bearer rdk_${rng.word(40)}` }, label: 'unknown rdk_ key' },
    { headers: { authorization: `Bearer ${fx.adminJwt.slice(0, -4)}AAAA` }, label: 'admin token, signature altered' },
    { headers: { 'x-api-key': 'rdk_\u00ff\u00fe' }, label: 'latin1 bytes in X-API-Key' },
    { headers: { authorization: 'Basic Og==' }, label: 'Basic credential' },
    { headers: { 'x-api-key': fx.apiKey.slice(0, -1) }, label: 'API key, last character cut' },
  ]);
}

function fillParams(route: RouteSummary, fx: Fixture, rng: Rng, engine: string, garbage: boolean): string {
  const safe = route.method === 'GET' || route.method === 'HEAD';
  // A wildcard is the rest of the path: a model id (GET /models/{id}), slashes and colons allowed.
  const url =
    route.url === '*' ? route.url : route.url.replace('*', () => (garbage ? garbageId(rng) : rng.pick([fx.chatModel, 'auto', 'lib/x:1'])));
  return url.replace(/:(\w+)/g, (_, name: string) => {
    if (garbage && rng.chance(0.7)) return garbageId(rng);
    switch (name) {
      // Tenant A only where nothing changes: a valid PATCH may disable the tenant it names.
      case 'tenantId':
        return safe && rng.chance(0.5) ? fx.tenantA : fx.tenantB;
      case 'userId':
        return fx.ids.userId;
      case 'keyId':
        return fx.ids.keyId;
      case 'workspaceId':
        return fx.ids.workspaceId;
      case 'collectionId':
        return fx.ids.collectionId;
      case 'documentId':
        return fx.ids.documentId;
      case 'nodeId':
        return fx.ids.nodeId;
      case 'conversationId':
        return fx.ids.conversationId;
      case 'threadId':
        return fx.ids.threadId;
      case 'messageId':
        return fx.ids.messageId;
      case 'assistantId':
        return fx.ids.assistantId;
      case 'scimUserId':
        return fx.ids.scimUserId;
      case 'scimGroupId':
        return fx.ids.scimGroupId;
      case 'resourceTypeId':
        return rng.pick(['User', 'Group', 'user']);
      case 'schemaId':
        return rng.pick(['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:core:2.0:Group']);
      case 'engine':
        return engine;
      default:
        return `${name}-${rng.word(6)}`;
    }
  });
}

// Values a field needs to get past validation and into the service: ids of the fixture,
// a model the fake engine serves, usernames that are never the admin's (wrong passwords
// for it would lock it out, and the final login check would fail for the wrong reason).
function hintsFor(route: RouteSummary, fx: Fixture, rng: Rng, engine: string): Hint {
  const pull = route.url.includes('/pull/');
  return (field) => {
    switch (field) {
      case 'username':
        return `fz-${rng.word(8)}`;
      case 'password':
        return `fuzz-password-${rng.word(6)}`;
      case 'email':
        return `fz-${rng.word(6)}@example.test`;
      case 'url':
        return `${fx.closedUrl}/${rng.word(4)}.gguf`;
      case 'model':
        return pull ? (engine === 'local' ? `fz-${rng.word(5)}.gguf` : `fz-${rng.word(5)}:latest`) : rng.pick([fx.chatModel, 'auto']);
      case 'defaultModel':
      case 'allowedModels[]':
        return rng.pick([fx.chatModel, `fz-${rng.word(5)}`]);
      case 'tenantIds[]':
        return fx.tenantB;
      case 'workspaceIds[]':
      case 'workspace_ids[]':
        return fx.ids.workspaceId;
      case 'assistant_id':
        return fx.ids.assistantId;
      case 'conversationId':
        return fx.ids.conversationId;
      case 'sha256':
        return Array.from({ length: 64 }, () => '0123456789abcdef'[rng.int(0, 15)]).join('');
      case 'code':
        return String(rng.int(0, 999_999)).padStart(6, '0');
      case 'content':
      case 'message':
        return 'hello';
      case 'max_tokens':
        return rng.int(1, 16);
      case 'apiKey':
        return `sk-fuzz-${rng.word(8)}`;
      default:
        return undefined;
    }
  };
}

const join = (a: string, b: string) => `${a}; ${b}`;
