// Collections: /api/os/workspaces/:workspaceId/collections and /api/os/collections/:collectionId.
// Any credential of the tenant reads; a tenant admin or an API key changes.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { Collection, CollectionParams, CollectionPatch, NewCollection, WorkspaceCollectionsParams } from './schemas.js';
import { createCollection, deleteCollection, getCollection, listCollections, updateCollection, type CollectionDeps } from './service.js';

export const collectionRoutes: FastifyPluginAsyncTypebox<{ deps: CollectionDeps }> = async (app, { deps }) => {
  app.get(
    '/workspaces/:workspaceId/collections',
    {
      config: { access: 'tenant' },
      schema: {
        params: WorkspaceCollectionsParams,
        response: { 200: Type.Object({ data: Type.Array(Collection) }), ...problems(401, 404) },
      },
    },
    async (request) => ({ data: await listCollections(deps, principalOf(request), request.params.workspaceId) }),
  );

  app.post(
    '/workspaces/:workspaceId/collections',
    {
      config: { access: 'tenantEditor' },
      schema: {
        params: WorkspaceCollectionsParams,
        body: NewCollection,
        response: { 201: Collection, ...problems(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createCollection(deps, principalOf(request), request.params.workspaceId, request.body)),
  );

  app.get(
    '/collections/:collectionId',
    { config: { access: 'tenant' }, schema: { params: CollectionParams, response: { 200: Collection, ...problems(401, 404) } } },
    async (request) => getCollection(deps, principalOf(request), request.params.collectionId),
  );

  app.patch(
    '/collections/:collectionId',
    {
      config: { access: 'tenantEditor' },
      schema: { params: CollectionParams, body: CollectionPatch, response: { 200: Collection, ...problems(400, 401, 403, 404, 409, 503) } },
    },
    async (request) => updateCollection(deps, principalOf(request), request.params.collectionId, request.body),
  );

  app.delete(
    '/collections/:collectionId',
    {
      config: { access: 'tenantEditor' },
      schema: { params: CollectionParams, response: { 204: Type.Null(), ...problems(401, 403, 404, 409) } },
    },
    async (request, reply) => {
      await deleteCollection(deps, principalOf(request), request.params.collectionId);
      return reply.code(204).send(null);
    },
  );
};
