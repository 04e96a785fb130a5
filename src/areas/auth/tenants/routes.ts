import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';

export const tenantRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async () => {};
