// POST /api/os/search: the snippets grounding would use for a query, for debugging
// and for integrations that want retrieval only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { validation } from '../../../platform/errors.js';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { SearchBody, SearchResponse } from './schemas.js';
import { hasScope } from './scopes.js';
import { retrieve, type RetrievalDeps } from './search.js';

export const retrievalRoutes: FastifyPluginAsyncTypebox<{ deps: RetrievalDeps }> = async (app, { deps }) => {
  app.post(
    '/search',
    { config: { access: 'tenant' }, schema: { body: SearchBody, response: { 200: SearchResponse, ...problems(400, 401, 404) } } },
    async (request) => {
      // Searching everything the tenant has is not a thing: a search names where to look.
      if (!hasScope(request.body))
        throw validation('workspaceIds', 'at least one of workspaceIds, collectionIds and ragScopes must name something to search');
      const result = await retrieve(deps, principalOf(request).tenantId, request.body);
      return { data: result.snippets, status: result.status, retrieval: result.retrieval };
    },
  );
};
