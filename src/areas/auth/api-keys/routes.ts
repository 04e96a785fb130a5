import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async () => {};
