// The llm area under /api/llm/v1: compute nodes, models, chat completions, model pulls.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { nodeRoutes } from './nodes/routes.js';
import { modelRoutes } from './models/routes.js';
import { chatRoutes } from './chat/routes.js';
import { pullRoutes } from './pull/routes.js';

export const llmRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  await app.register(nodeRoutes, { ctx });
  await app.register(modelRoutes, { ctx });
  await app.register(chatRoutes, { ctx });
  await app.register(pullRoutes, { ctx });
};
