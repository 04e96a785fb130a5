// /api/os/workspaces: the tenant's workspaces. A 200 on the list also confirms that
// an API key is valid and resolves its tenant (spec 4).
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { NewWorkspace, Workspace, WorkspaceParams, WorkspacePatch } from './schemas.js';
import { createWorkspace, deleteWorkspace, getWorkspace, listWorkspaces, updateWorkspace, type WorkspaceDeps } from './service.js';

export const workspaceRoutes: FastifyPluginAsyncTypebox<{ deps: WorkspaceDeps }> = async (app, { deps }) => {
  app.get(
    '/workspaces',
    { config: { access: 'tenant' }, schema: { response: { 200: Type.Object({ data: Type.Array(Workspace) }), ...problems(401) } } },
    async (request) => ({
      data: await listWorkspaces(deps, principalOf(request)),
    }),
  );

  app.post(
    '/workspaces',
    { config: { access: 'tenantEditor' }, schema: { body: NewWorkspace, response: { 201: Workspace, ...problems(400, 401, 403) } } },
    async (request, reply) => reply.code(201).send(await createWorkspace(deps, principalOf(request), request.body)),
  );

  app.get(
    '/workspaces/:workspaceId',
    { config: { access: 'tenant' }, schema: { params: WorkspaceParams, response: { 200: Workspace, ...problems(401, 404) } } },
    async (request) => getWorkspace(deps, principalOf(request), request.params.workspaceId),
  );

  app.patch(
    '/workspaces/:workspaceId',
    {
      config: { access: 'tenantEditor' },
      schema: { params: WorkspaceParams, body: WorkspacePatch, response: { 200: Workspace, ...problems(400, 401, 403, 404) } },
    },
    async (request) => updateWorkspace(deps, principalOf(request), request.params.workspaceId, request.body),
  );

  app.delete(
    '/workspaces/:workspaceId',
    { config: { access: 'tenantEditor' }, schema: { params: WorkspaceParams, response: { 204: Type.Null(), ...problems(401, 403, 404) } } },
    async (request, reply) => {
      await deleteWorkspace(deps, principalOf(request), request.params.workspaceId);
      return reply.code(204).send(null);
    },
  );
};
