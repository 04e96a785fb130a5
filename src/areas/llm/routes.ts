// The llm area under /api/llm/v1: compute nodes, models, chat completions, the persisted
// chat and its conversations, the threads API (assistants, threads, messages), model pulls.
// The area takes what it needs of the composition root (AppContext satisfies
// LlmAreaDeps) and hands each feature its own narrow deps, built once here.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { LlmConfig } from '../../platform/config.js';
import type { Database } from '../../platform/db/database.js';
import type { InvalidationBus } from '../../platform/coordination/invalidation-bus.js';
import type { Secrets } from '../../platform/secrets.js';
import type { LlmServices } from './services.js';
import type { LlmObserver } from './observer.js';
import type { CheckScope, Retrieve } from '../grounding.js';
import { nodeRoutes } from './nodes/routes.js';
import { modelRoutes } from './models/routes.js';
import { chatRoutes } from './chat/routes.js';
import { completionRoutes } from './completions/routes.js';
import { embeddingRoutes, type BuiltInEmbedding } from './embeddings/routes.js';
import { rerankRoutes } from './rerank/routes.js';
import { conversationRoutes } from './conversations/routes.js';
import { pullRoutes } from './pull/routes.js';
import { assistantRoutes } from './assistants/routes.js';
import { threadRoutes } from './threads/routes.js';
import { threadRunRoutes } from './thread-runs/routes.js';
import { RunFeeds } from './thread-runs/feed.js';
import { responseRoutes } from './responses/routes.js';
import { applyRateLimits } from './rate-limits/hook.js';
import { mcpServerRoutes } from './mcp/registry/routes.js';
import { mcpEndpointRoutes } from './mcp/endpoint/routes.js';
import { mcpCallRoutes } from './mcp/calls/routes.js';
import { limitToolCalls } from './mcp/limited-tool-source.js';

export interface LlmAreaDeps {
  config: {
    llm: Pick<LlmConfig, 'heartbeatSeconds' | 'streamEarlyHeadMs' | 'healthIntervalSeconds' | 'ragContextTokens' | 'runExpirySeconds'>;
    /** Browser origins CORS allows: the MCP endpoint refuses any other Origin. */
    corsOrigins: readonly string[];
  };
  db: Database;
  secrets: Pick<Secrets, 'encrypt' | 'decrypt'>;
  bus: Pick<InvalidationBus, 'publish' | 'subscribe'>;
  /** The area's long-lived parts (services.ts). Their functions are closures, safe to hand on detached. */
  llm: LlmServices;
  /** /metrics, when served: what the chat path reports (overhead, time to first token, active streams). */
  metrics?: LlmObserver | undefined;
  /**
   * The os area's retrieval, for grounded answers; its check that a stored grounding
   * scope is the tenant's (threads, assistants); the embedders it serves itself (listed in /models).
   */
  os: {
    retrieve: Retrieve;
    checkScope: CheckScope;
    builtInModels: readonly { id: string; description: string }[];
    /** The os area's embedders: POST /embeddings serves the built-in models through them. */
    embedders: BuiltInEmbedding;
  };
}

export const llmRoutes: FastifyPluginAsyncTypebox<{ deps: LlmAreaDeps }> = async (app, { deps }) => {
  const { llm } = deps;
  const heartbeatMs = deps.config.llm.heartbeatSeconds * 1000;
  // Retry-After for 503s the engines cause: the router's view of nodes refreshes this often.
  const retryAfterSeconds = deps.config.llm.healthIntervalSeconds;
  // Before any route is added: it hooks every route that reaches a model as it is registered.
  applyRateLimits(app, { limiter: llm.limiter, tenantLimits: llm.tenantLimits, contextTokens: deps.config.llm.ragContextTokens });
  await app.register(nodeRoutes, { deps: { db: deps.db, secrets: deps.secrets, bus: deps.bus, nodes: llm.nodes, checkUrl: llm.checkUrl } });
  await app.register(mcpServerRoutes, {
    deps: { db: deps.db, secrets: deps.secrets, checkUrl: llm.checkUrl, catalog: llm.mcpCatalog, stdio: llm.mcpStdio },
  });
  await app.register(modelRoutes, { deps: { router: llm.router, builtIn: deps.os.builtInModels } });
  const grounding = { retrieve: deps.os.retrieve, contextTokens: deps.config.llm.ragContextTokens };
  await app.register(chatRoutes, {
    deps: {
      router: llm.router,
      usage: llm.usage,
      calls: llm.calls,
      heartbeatMs,
      earlyHeadMs: deps.config.llm.streamEarlyHeadMs,
      retryAfterSeconds,
      grounding,
      observer: deps.metrics,
    },
  });
  // The rest of the OpenAI surface: embeddings, rerank (vLLM's, Cohere's shape), and the legacy text completions.
  await app.register(embeddingRoutes, {
    deps: {
      router: llm.router,
      usage: llm.usage,
      calls: llm.calls,
      retryAfterSeconds,
      builtIn: { ids: deps.os.builtInModels.map((m) => m.id), embedders: deps.os.embedders },
    },
  });
  await app.register(rerankRoutes, { deps: { router: llm.router, usage: llm.usage, calls: llm.calls, retryAfterSeconds } });
  await app.register(completionRoutes, {
    deps: { router: llm.router, usage: llm.usage, calls: llm.calls, heartbeatMs, retryAfterSeconds },
  });
  await app.register(conversationRoutes, {
    deps: {
      db: deps.db,
      router: llm.router,
      usage: llm.usage,
      runs: llm.runs,
      calls: llm.calls,
      heartbeatMs,
      retryAfterSeconds,
      grounding,
    },
  });
  await app.register(pullRoutes, {
    deps: {
      router: llm.router,
      calls: llm.calls,
      checkUrl: llm.checkUrl,
      outboundGuard: llm.outboundGuard,
      heartbeatMs,
      retryAfterSeconds,
    },
  });
  // The threads API: assistants, threads and their messages (runs: thread-runs/).
  const checkScope = deps.os.checkScope;
  await app.register(assistantRoutes, { deps: { db: deps.db, router: llm.router, checkScope } });
  await app.register(threadRoutes, { deps: { db: deps.db, checkScope, runs: llm.runs } });
  // Thread runs execute in the background; their stream events are kept per run while they do.
  const llmLog = app.log.child({ area: 'llm' });
  const logError = (error: unknown, message: string) => llmLog.error({ err: error }, message);
  await app.register(threadRunRoutes, {
    deps: {
      db: deps.db,
      router: llm.router,
      runs: llm.runs,
      calls: llm.calls,
      grounding,
      checkScope,
      feeds: new RunFeeds({ db: deps.db, logError }),
      heartbeatMs,
      runExpirySeconds: deps.config.llm.runExpirySeconds,
      logError,
    },
  });
  // The Responses API, on the same store and executor.
  await app.register(responseRoutes, {
    deps: {
      db: deps.db,
      router: llm.router,
      runs: llm.runs,
      calls: llm.calls,
      grounding,
      checkScope,
      heartbeatMs,
      retryAfterSeconds,
      // The endpoint counts its calls itself (an HTTP 429 there); the Responses API's through this wrapper.
      mcpTools: () => limitToolCalls(llm.mcpTools, llm.mcpCallLimits),
      mcpAudit: llm.mcpAudit,
    },
  });
  // The audit of MCP tool calls (mcp/calls/), written by the endpoint: before it, a static path under /mcp/.
  await app.register(mcpCallRoutes, { deps: { db: deps.db } });
  // The MCP endpoint (mcp/endpoint/): what MCP clients connect to.
  await app.register(mcpEndpointRoutes, {
    deps: {
      toolSource: () => llm.mcpTools,
      audit: llm.mcpAudit,
      toolCallLimits: llm.mcpCallLimits,
      bus: deps.bus,
      corsOrigins: deps.config.corsOrigins,
      // Only the kind of failure: the SDK's messages can quote the request, and no argument reaches the log.
      logError: (error) => llmLog.warn(`mcp endpoint: ${error.message.split(':')[0]}`),
    },
  });
};
