// POST /api/llm/v1/{engine}/models/pull/stream: a tenant admin pulls a model into
// the tenant's node for `engine` (`ollama`: from Ollama's registry; `local`: a GGUF
// file from a URL into the models dir) and watches the progress as an event stream.
// Other engine names (including `openai`, whose servers cannot pull) are 404: no such route.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { AppError } from '../../../platform/errors.js';
import { principalOf } from '../../guard.js';
import { requireTenantAdmin } from '../../../platform/authorization.js';
import { isPlatformAdmin } from '../../../platform/identity.js';
import { problems } from '../../schemas.js';
import { relayPull } from './relay.js';
import { checkCallerUrl, urlScopeOf } from '../outbound/url-policy.js';
import { ownedBy } from '../router/node-runtime.js';
import { checkPullBody, PULL_ENGINES, PullBody, PullParams, type PullEngine } from './schemas.js';

export const pullRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { router } = ctx.llm;

  app.post(
    '/:engine/models/pull/stream',
    { schema: { params: PullParams, body: PullBody, response: problems(400, 401, 403, 404, 503) } },
    async (request, reply) => {
      const engine = request.params.engine;
      if (!PULL_ENGINES.includes(engine as PullEngine)) {
        throw new AppError('NOT_FOUND', `No model pull for engine "${engine}". Pull with one of: ${PULL_ENGINES.join(', ')}.`);
      }
      const principal = principalOf(request);
      requireTenantAdmin(principal, principal.tenantId);
      checkPullBody(engine as PullEngine, request.body);
      // The local engine downloads for every tenant: a tenant admin's URL is held to the
      // tenant deny list (private ranges) as node URLs are, here for a clear 400 and in
      // the engine for every redirect hop and every connection.
      if (request.body.url !== undefined) await checkCallerUrl(ctx.llm, principal, request.body.url);
      const lease = await router.pullTarget(principal.tenantId, engine as PullEngine);
      request.log.info({ engine, nodeId: lease.node.id, model: request.body.model }, 'model pull started');
      await relayPull(
        {
          lease,
          model: request.body.model,
          url: request.body.url,
          sha256: request.body.sha256?.toLowerCase(),
          guard: ctx.llm.outboundGuard(urlScopeOf(principal)),
          calls: ctx.llm.calls,
          // On a node other tenants share, the model under a name may be another tenant's.
          replace: isPlatformAdmin(principal) || ownedBy(lease.node.tenantIds, principal.tenantId),
          heartbeatMs: ctx.config.llm.heartbeatSeconds * 1000,
          retryAfterSeconds: ctx.config.llm.healthIntervalSeconds,
          beforeSuccess: () => router.refresh(lease.node.id),
        },
        reply,
      );
      return reply;
    },
  );
};
