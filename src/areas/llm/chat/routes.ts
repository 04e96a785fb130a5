// Placeholder until the chat handlers land (same session); registered by src/areas/llm/routes.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';

export const chatRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async () => {};
