// Placeholder until the pull handlers land (same session); registered by src/areas/llm/routes.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';

export const pullRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async () => {};
