import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';

export const userRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async () => {};
