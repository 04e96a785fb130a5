// /api/os/workspaces: the tenant's workspaces. A 200 on the list also confirms that
// an API key is valid and resolves its tenant (spec 4).
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { principalOf } from '../../guard.js';
import { problems, Text, Timestamp } from '../../schemas.js';
import { createWorkspace, deleteWorkspace, getWorkspace, listWorkspaces, updateWorkspace } from './service.js';

const Workspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const Params = Type.Object({ workspaceId: Type.String() });

export const workspaceRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  app.get('/workspaces', { schema: { response: { 200: Type.Object({ data: Type.Array(Workspace) }), ...problems(401) } } }, async (request) => ({
    data: await listWorkspaces(db, principalOf(request)),
  }));

  app.post(
    '/workspaces',
    {
      schema: {
        body: Type.Object({ name: Text(200), description: Type.Optional(Type.String({ maxLength: 2000, text: 'multiline' })) }),
        response: { 201: Workspace, ...problems(400, 401, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(await createWorkspace(db, principalOf(request), request.body)),
  );

  app.get('/workspaces/:workspaceId', { schema: { params: Params, response: { 200: Workspace, ...problems(401, 404) } } }, async (request) =>
    getWorkspace(db, principalOf(request), request.params.workspaceId),
  );

  app.patch(
    '/workspaces/:workspaceId',
    {
      schema: {
        params: Params,
        body: Type.Object({
          name: Type.Optional(Text(200)),
          description: Type.Optional(Type.Union([Type.String({ maxLength: 2000, text: 'multiline' }), Type.Null()])),
        }),
        response: { 200: Workspace, ...problems(400, 401, 403, 404) },
      },
    },
    async (request) => updateWorkspace(db, principalOf(request), request.params.workspaceId, request.body),
  );

  app.delete('/workspaces/:workspaceId', { schema: { params: Params, response: { 204: Type.Null(), ...problems(401, 403, 404) } } }, async (request, reply) => {
    await deleteWorkspace(db, principalOf(request), request.params.workspaceId);
    return reply.code(204).send(null);
  });
};
