// OpenAI's Responses API on the platform's conversation store: create (JSON or typed
// event stream), read, delete, and a response's input items. Every route acts on the
// caller's owner's records only (access `owner`, history/owner.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { ListQuery } from '../history/pages.js';
import { answerJson, answerStream } from './answer.js';
import { prepareResponse } from './create.js';
import { answerMcp } from './mcp-run.js';
import { CreateResponseBody, DeletedResponse, InputItemList, ResponseObject, ResponseParams } from './schemas.js';
import { deleteResponse, getResponse, listInputItems, type ResponseDeps } from './service.js';

export const responseRoutes: FastifyPluginAsyncTypebox<{ deps: ResponseDeps }> = async (app, { deps }) => {
  const config = { access: 'owner' } as const;

  app.post(
    '/responses',
    { config, schema: { body: CreateResponseBody, response: { 200: ResponseObject, ...problems(400, 401, 404, 409, 503) } } },
    async (request, reply) => {
      const prepared = await prepareResponse(deps, principalOf(request), String(request.id), request.body);
      if (prepared.mcp) return answerMcp(deps, prepared, reply);
      if (request.body.stream !== true) return answerJson(deps, prepared, reply);
      await answerStream(deps, prepared, reply);
      return reply;
    },
  );

  app.get(
    '/responses/:responseId',
    { config, schema: { params: ResponseParams, response: { 200: ResponseObject, ...problems(400, 401, 404) } } },
    async (request) => getResponse(deps, principalOf(request), request.params.responseId),
  );

  app.delete(
    '/responses/:responseId',
    { config, schema: { params: ResponseParams, response: { 200: DeletedResponse, ...problems(400, 401, 404) } } },
    async (request) => deleteResponse(deps, principalOf(request), request.params.responseId),
  );

  app.get(
    '/responses/:responseId/input_items',
    {
      config,
      schema: { params: ResponseParams, querystring: ListQuery, response: { 200: InputItemList, ...problems(400, 401, 404) } },
    },
    async (request) => listInputItems(deps, principalOf(request), request.params.responseId, request.query),
  );
};
