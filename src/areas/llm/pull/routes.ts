// POST /api/llm/v1/{engine}/models/pull/stream: a tenant admin pulls a model into
// the tenant's node for `engine` (`ollama`: from Ollama's registry; `local`: a GGUF
// file from a URL into the models dir) and watches the progress as an event stream.
// Other engine names (including `openai`, whose servers cannot pull) are 404: no such route.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../../platform/errors.js';
import { principalOf } from '../../guard.js';
import { requireTenantAdmin } from '../../../platform/authorization.js';
import { isPlatformAdmin } from '../../../platform/identity.js';
import type { OutboundGuard } from '../../../engines/types.js';
import { problems } from '../../schemas.js';
import type { OpenCalls } from '../calls/open-calls.js';
import { relayPull } from './relay.js';
import type { UrlScope } from '../outbound/url-guard.js';
import { checkCallerUrl, urlScopeOf, type UrlPolicyDeps } from '../outbound/url-policy.js';
import { ownedBy } from '../router/node-runtime.js';
import type { ModelRouter } from '../router/types.js';
import { checkPullBody, PULL_ENGINES, PullBody, PullParams, type PullEngine } from './schemas.js';

export interface PullDeps extends UrlPolicyDeps {
  router: Pick<ModelRouter, 'pullTarget' | 'refresh'>;
  /** The guard a download's every hop and connection is held to, for a URL given by `scope` (LlmServices.outboundGuard). */
  outboundGuard(scope: UrlScope): OutboundGuard;
  /** Counts the pull while it runs, so that a shutdown can stop it cleanly. */
  calls: OpenCalls;
  heartbeatMs: number;
  /** Retry-After for 503s the node causes: the router's view of nodes refreshes this often. */
  retryAfterSeconds: number;
}

export const pullRoutes: FastifyPluginAsyncTypebox<{ deps: PullDeps }> = async (app, { deps }) => {
  const { router } = deps;

  app.post(
    '/:engine/models/pull/stream',
    { config: { access: 'tenantAdmin' }, schema: { params: PullParams, body: PullBody, response: problems(400, 401, 403, 404, 503) } },
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
      if (request.body.url !== undefined) await checkCallerUrl(deps, principal, request.body.url);
      const lease = await router.pullTarget(principal.tenantId, engine as PullEngine);
      request.log.info({ engine, nodeId: lease.node.id, model: request.body.model }, 'model pull started');
      await relayPull(
        {
          lease,
          model: request.body.model,
          url: request.body.url,
          sha256: request.body.sha256?.toLowerCase(),
          guard: deps.outboundGuard(urlScopeOf(principal)),
          calls: deps.calls,
          // On a node other tenants share, the model under a name may be another tenant's.
          replace: isPlatformAdmin(principal) || ownedBy(lease.node.tenantIds, principal.tenantId),
          heartbeatMs: deps.heartbeatMs,
          retryAfterSeconds: deps.retryAfterSeconds,
          beforeSuccess: () => router.refresh(lease.node.id),
        },
        reply,
      );
      return reply;
    },
  );
};
