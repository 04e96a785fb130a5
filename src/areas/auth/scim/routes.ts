// /api/auth/scim/v2: SCIM 2.0 (RFC 7644) for a tenant's identity provider (Okta, Entra
// ID, Keycloak…), with the tenant's SCIM token as the bearer token and nothing else
// (the edge, authenticate.ts). Bodies are application/scim+json or application/json;
// answers are application/scim+json, and every error is SCIM's error schema. Paths are
// registered lowercase and matched in any case (`/Users`, `/users`): the gateway's
// legacy-casing rewrite lowers a path segment that is a registered literal.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parse as parseJsonSafely } from 'secure-json-parse';
import { AppError } from '../../../platform/errors.js';
import { principalOf } from '../../guard.js';
import { publicOrigin } from '../sessions/origin.js';
import { scimErrorHandler, sendScimError } from './errors.js';
import { resourceTypes, schemas, serviceProviderConfig } from './discovery.js';
import { createGroup, deleteGroup, getGroup, listGroups, patchGroup, replaceGroup } from './groups.js';
import { SCIM_LIMITS, SCIM_MEDIA_TYPE } from './protocol.js';
import { listResponse, project } from './resource.js';
import {
  GroupBody,
  GroupParams,
  ListQuery,
  PatchBody,
  ReadQuery,
  ResourceTypeParams,
  SchemaParams,
  UserBody,
  UserParams,
} from './schemas.js';
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser, type ScimDeps } from './users.js';

export const SCIM_PREFIX = '/api/auth/scim/v2';

const scim = { config: { access: 'scim' as const }, bodyLimit: SCIM_LIMITS.maxPayloadBytes };

/** Where the resources live (meta.location, members' $ref): the public origin (GATEWAY_PUBLIC_URL behind a proxy) and the SCIM prefix. */
const baseOf = (request: FastifyRequest, deps: ScimDeps): string => `${publicOrigin(request, deps.config)}${SCIM_PREFIX}`;

function answer(reply: FastifyReply, status: number, body: unknown) {
  return reply.code(status).type(`${SCIM_MEDIA_TYPE}; charset=utf-8`).send(body);
}

export const scimRoutes: FastifyPluginAsyncTypebox<{ deps: ScimDeps }> = async (app, { deps }) => {
  app.setErrorHandler(scimErrorHandler);
  app.setNotFoundHandler((request, reply) =>
    sendScimError(reply, 404, `No SCIM endpoint at ${request.method} ${request.url.split('?')[0]}.`),
  );
  // The same parsing as application/json (gateway/app.ts): empty is no body, prototype keys are refused.
  app.addContentTypeParser(SCIM_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonSafely(text, null, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new AppError('BAD_REQUEST', 'The request body is not valid JSON, or has a __proto__ or constructor.prototype key.'), undefined);
    }
  });

  // ---- Users ----
  app.get('/users', { ...scim, schema: { querystring: ListQuery } }, async (request, reply) => {
    const list = await listUsers(deps, principalOf(request), request.query, baseOf(request, deps));
    return answer(reply, 200, { ...list, Resources: list.Resources.map((r) => project(r, request.query)) });
  });
  app.post('/users', { ...scim, schema: { body: UserBody } }, async (request, reply) =>
    answer(reply, 201, await createUser(deps, principalOf(request), request.body, baseOf(request, deps))),
  );
  app.get('/users/:scimUserId', { ...scim, schema: { params: UserParams, querystring: ReadQuery } }, async (request, reply) =>
    answer(reply, 200, project(await getUser(deps, principalOf(request), request.params.scimUserId, baseOf(request, deps)), request.query)),
  );
  app.put('/users/:scimUserId', { ...scim, schema: { params: UserParams, body: UserBody } }, async (request, reply) =>
    answer(reply, 200, await replaceUser(deps, principalOf(request), request.params.scimUserId, request.body, baseOf(request, deps))),
  );
  app.patch('/users/:scimUserId', { ...scim, schema: { params: UserParams, body: PatchBody } }, async (request, reply) =>
    answer(reply, 200, await patchUser(deps, principalOf(request), request.params.scimUserId, request.body, baseOf(request, deps))),
  );
  app.delete('/users/:scimUserId', { ...scim, schema: { params: UserParams } }, async (request, reply) => {
    await deleteUser(deps, principalOf(request), request.params.scimUserId);
    return reply.code(204).send();
  });

  // ---- Groups ----
  app.get('/groups', { ...scim, schema: { querystring: ListQuery } }, async (request, reply) => {
    const list = await listGroups(deps, principalOf(request), request.query, baseOf(request, deps));
    return answer(reply, 200, { ...list, Resources: list.Resources.map((r) => project(r, request.query)) });
  });
  app.post('/groups', { ...scim, schema: { body: GroupBody } }, async (request, reply) =>
    answer(reply, 201, await createGroup(deps, principalOf(request), request.body, baseOf(request, deps))),
  );
  app.get('/groups/:scimGroupId', { ...scim, schema: { params: GroupParams, querystring: ReadQuery } }, async (request, reply) =>
    answer(
      reply,
      200,
      project(await getGroup(deps, principalOf(request), request.params.scimGroupId, baseOf(request, deps)), request.query),
    ),
  );
  app.put('/groups/:scimGroupId', { ...scim, schema: { params: GroupParams, body: GroupBody } }, async (request, reply) =>
    answer(reply, 200, await replaceGroup(deps, principalOf(request), request.params.scimGroupId, request.body, baseOf(request, deps))),
  );
  app.patch('/groups/:scimGroupId', { ...scim, schema: { params: GroupParams, body: PatchBody } }, async (request, reply) =>
    answer(reply, 200, await patchGroup(deps, principalOf(request), request.params.scimGroupId, request.body, baseOf(request, deps))),
  );
  app.delete('/groups/:scimGroupId', { ...scim, schema: { params: GroupParams } }, async (request, reply) => {
    await deleteGroup(deps, principalOf(request), request.params.scimGroupId);
    return reply.code(204).send();
  });

  // ---- Discovery (RFC 7644 §4) ----
  app.get('/serviceproviderconfig', scim, async (request, reply) => {
    principalOf(request);
    return answer(reply, 200, serviceProviderConfig(baseOf(request, deps)));
  });
  app.get('/resourcetypes', scim, async (request, reply) => {
    principalOf(request);
    const all = resourceTypes(baseOf(request, deps));
    return answer(reply, 200, listResponse(all, all.length, { startIndex: 1, count: all.length }));
  });
  app.get('/resourcetypes/:resourceTypeId', { ...scim, schema: { params: ResourceTypeParams } }, async (request, reply) => {
    principalOf(request);
    const found = resourceTypes(baseOf(request, deps)).find((r) => r.id.toLowerCase() === request.params.resourceTypeId.toLowerCase());
    return found ? answer(reply, 200, found) : sendScimError(reply, 404, 'No such resource type: there are User and Group.');
  });
  app.get('/schemas', scim, async (request, reply) => {
    principalOf(request);
    const all = schemas(baseOf(request, deps));
    return answer(reply, 200, listResponse(all, all.length, { startIndex: 1, count: all.length }));
  });
  app.get('/schemas/:schemaId', { ...scim, schema: { params: SchemaParams } }, async (request, reply) => {
    principalOf(request);
    const found = schemas(baseOf(request, deps)).find((s) => s.id.toLowerCase() === request.params.schemaId.toLowerCase());
    return found ? answer(reply, 200, found) : sendScimError(reply, 404, 'No such schema.');
  });
};
