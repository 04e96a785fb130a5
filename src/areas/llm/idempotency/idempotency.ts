// `Idempotency-Key` on the threads API's creates (assistants, threads, messages, runs):
// a client that retries a create it never saw the answer to gets the record the first
// attempt made, not a second one.
//
//   return idempotent(deps, principal, request,
//     async () => { const thread = await createThread(…); return { id: thread.id, value: thread }; },
//     (id) => findThread(…, id),   // the record's current state, undefined when it is gone
//   );
//
// - Without the header, `create` just runs.
// - The key belongs to the caller's owner (llm/history/owner.ts) in its tenant, for 24 h;
//   an older row counts as absent and is replaced.
// - The first request stores its fingerprint (method, route pattern, path parameters,
//   sha256 of the canonical JSON body) and, once `create` resolves, the id it made.
// - A retry with the same key and the same request gets `replay(id)`: the record as it
//   is now, answered with the route's same status. If it was deleted since: 404.
// - The same key with a different request: 400 naming the header.
// - A duplicate while the first is still creating: 409 with Retry-After (the openai SDK
//   retries 409 by itself). A claim left pending for a minute (its process died) is taken over.
// - When `create` throws, the key is released, so a retry can succeed.
// `create` should cover making the record only (a run's insertion, not its generation).
import { createHash } from 'node:crypto';
import type { Database } from '../../../platform/db/database.js';
import { AppError, validation } from '../../../platform/errors.js';
import type { Principal } from '../../../platform/identity.js';
import { ownerOf } from '../history/owner.js';
import { idempotencyRepository, type KeyRef } from './repository.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const KEEP_SECONDS = 24 * 60 * 60;
/** A claim still pending after this long was left by a process that died mid-create. */
const PENDING_SECONDS = 60;
/** One claim in this many also clears the owner's expired keys (the table stays small without a sweeper). */
const PURGE_EVERY = 50;

export interface IdempotencyDeps {
  db: Database;
}

/** What of a request makes its fingerprint: FastifyRequest satisfies it. */
export interface IdempotentRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  routeOptions: { url?: string | undefined };
  params: unknown;
  body: unknown;
}

export async function idempotent<T>(
  deps: IdempotencyDeps,
  principal: Principal,
  request: IdempotentRequest,
  create: () => Promise<{ id: string; value: T }>,
  replay: (id: string) => Promise<T | undefined>,
): Promise<T> {
  const key = idempotencyKeyOf(request);
  if (key === undefined) return (await create()).value;
  const ref: KeyRef = { tenantId: principal.tenantId, owner: ownerOf(principal), key };
  const fingerprint = fingerprintOf(request);
  if (Math.random() * PURGE_EVERY < 1) await idempotencyRepository.purge(deps.db, ref.tenantId, ref.owner, KEEP_SECONDS);

  // Two tries: a key released between our claim and our read is free again.
  for (let attempt = 0; attempt < 2; attempt++) {
    const claim = await idempotencyRepository.claim(deps.db, ref, fingerprint, KEEP_SECONDS, PENDING_SECONDS);
    if (claim !== undefined) {
      let created: { id: string; value: T };
      try {
        created = await create();
      } catch (error) {
        await idempotencyRepository.release(deps.db, ref, claim);
        throw error;
      }
      await idempotencyRepository.complete(deps.db, ref, claim, created.id);
      return created.value;
    }
    const existing = await idempotencyRepository.get(deps.db, ref);
    if (!existing) continue;
    if (existing.fingerprint !== fingerprint)
      throw validation(
        IDEMPOTENCY_HEADER,
        'this key was already used for a different request (another route or body); send a new key for a new request',
      );
    if (existing.resource_id === null) throw inProgress();
    const value = await replay(existing.resource_id);
    if (value === undefined)
      throw new AppError('NOT_FOUND', `The object created with this ${IDEMPOTENCY_HEADER} (${existing.resource_id}) no longer exists.`);
    return value;
  }
  throw inProgress();
}

const inProgress = () =>
  new AppError('CONFLICT', `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry it in a moment.`, {
    retryAfterSeconds: 1,
  });

/** The header's value (undefined without one); 1 to 255 printable ASCII characters, else 400. */
export function idempotencyKeyOf(request: Pick<IdempotentRequest, 'headers'>): string | undefined {
  const value = request.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(value))
    throw validation(IDEMPOTENCY_HEADER, 'must be 1 to 255 printable ASCII characters');
  return value;
}

/** Method, route pattern, path parameters and body, with object keys sorted: the same request, however its JSON was written. */
export function fingerprintOf(request: IdempotentRequest): string {
  const body = createHash('sha256')
    .update(canonical(request.body ?? null))
    .digest('hex');
  return `${request.method} ${request.routeOptions.url ?? ''} ${canonical(request.params ?? {})} ${body}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** idempotent() for a create whose answer is the record itself (its `id` is what a retry replays). */
export function idempotentRecord<T extends { id: string }>(
  deps: IdempotencyDeps,
  principal: Principal,
  request: IdempotentRequest,
  create: () => Promise<T>,
  replay: (id: string) => Promise<T | undefined>,
): Promise<T> {
  return idempotent(
    deps,
    principal,
    request,
    async () => {
      const record = await create();
      return { id: record.id, value: record };
    },
    replay,
  );
}
