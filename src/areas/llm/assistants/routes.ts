// /api/llm/v1/assistants: OpenAI's Assistants v2 assistants (the official SDK's
// beta.assistants client works unchanged). The caller's own; creates honour `Idempotency-Key`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { ListOf, ListQuery } from '../history/pages.js';
import { idempotentRecord } from '../idempotency/idempotency.js';
import { AssistantDeleted, AssistantObject, AssistantParams, AssistantPatch, NewAssistant } from './schemas.js';
import {
  createAssistant,
  deleteAssistant,
  findAssistant,
  getAssistant,
  listAssistants,
  updateAssistant,
  type AssistantDeps,
} from './service.js';

const owner = { access: 'owner' as const };

export const assistantRoutes: FastifyPluginAsyncTypebox<{ deps: AssistantDeps }> = async (app, { deps }) => {
  app.post(
    '/assistants',
    { config: owner, schema: { body: NewAssistant, response: { 200: AssistantObject, ...problems(400, 401, 404, 409) } } },
    async (request) => {
      const principal = principalOf(request);
      return idempotentRecord(
        deps,
        principal,
        request,
        () => createAssistant(deps, principal, request.body),
        (id) => findAssistant(deps, principal, id),
      );
    },
  );

  app.get(
    '/assistants',
    { config: owner, schema: { querystring: ListQuery, response: { 200: ListOf(AssistantObject), ...problems(400, 401) } } },
    async (request) => listAssistants(deps, principalOf(request), request.query),
  );

  app.get(
    '/assistants/:assistantId',
    { config: owner, schema: { params: AssistantParams, response: { 200: AssistantObject, ...problems(401, 404) } } },
    async (request) => getAssistant(deps, principalOf(request), request.params.assistantId),
  );

  app.post(
    '/assistants/:assistantId',
    {
      config: owner,
      schema: { params: AssistantParams, body: AssistantPatch, response: { 200: AssistantObject, ...problems(400, 401, 404) } },
    },
    async (request) => updateAssistant(deps, principalOf(request), request.params.assistantId, request.body),
  );

  app.delete(
    '/assistants/:assistantId',
    { config: owner, schema: { params: AssistantParams, response: { 200: AssistantDeleted, ...problems(401, 404) } } },
    async (request) => deleteAssistant(deps, principalOf(request), request.params.assistantId),
  );
};
