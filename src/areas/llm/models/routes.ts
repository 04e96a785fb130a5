// GET /api/llm/v1/models: the models the caller's tenant can use now, in OpenAI's
// list shape, each id usable as `model`. `auto` comes first: it stands for the
// tenant's default model (PATCH /api/auth/tenants/{id} `defaultModel`), or the
// first model of this list when no default is set. The built-in embedder comes last:
// it embeds documents (collections' embeddingModel) and is no chat model.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import type { ModelRouter } from '../router/types.js';
import { ModelList } from './schemas.js';

export interface ModelDeps {
  router: Pick<ModelRouter, 'availableModels'>;
  /** Models the gateway itself serves (the built-in embedder), listed after the nodes' models. */
  builtIn: readonly { id: string; description: string }[];
}

export const modelRoutes: FastifyPluginAsyncTypebox<{ deps: ModelDeps }> = async (app, { deps }) => {
  // `auto` has no creation time of its own: this server's start stands in for it.
  const started = Math.floor(Date.now() / 1000);

  app.get('/models', { config: { access: 'tenant' }, schema: { response: { 200: ModelList, ...problems(401) } } }, async (request) => {
    const { tenantId } = principalOf(request);
    const models = await deps.router.availableModels(tenantId);
    return {
      object: 'list' as const,
      data: [
        { id: 'auto', object: 'model' as const, created: started, owned_by: 'gateway' },
        ...models.map((m) => ({ id: m.id, object: 'model' as const, created: m.created, owned_by: m.ownedBy })),
        ...deps.builtIn.map((m) => ({
          id: m.id,
          object: 'model' as const,
          created: started,
          owned_by: 'gateway',
          description: m.description,
        })),
      ],
    };
  });
};
