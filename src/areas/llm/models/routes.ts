// GET /api/llm/v1/models: the models the caller's tenant can use now, in OpenAI's
// list shape, each id usable as `model`. `auto` comes first, while something serves
// it: it stands for the tenant's default model (PATCH /api/auth/tenants/{id}
// `defaultModel`) while a healthy node serves that, or the first model of this list
// when no default is set. Listed with nothing behind it, it would be an id that is
// not usable as `model` (spec 2.9), so it is left out then. The built-in embedder comes last:
// it embeds documents (collections' embeddingModel) and is no chat model. Models that
// are not for chat say so in `kind`: `embedding` (the built-in embedder), `rerank`
// (rerankers, for POST /rerank; kind.ts says how they are told).
// GET /api/llm/v1/models/{id}: one record of that list.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import type { ModelRouter } from '../router/types.js';
import { AppError } from '../../../platform/errors.js';
import { kindOf } from './kind.js';
import { Model, ModelList, ModelParams } from './schemas.js';

export interface ModelDeps {
  router: Pick<ModelRouter, 'availableModels' | 'autoModel'>;
  /** Models the gateway itself serves (the built-in embedder), listed after the nodes' models. */
  builtIn: readonly { id: string; description: string }[];
}

export const modelRoutes: FastifyPluginAsyncTypebox<{ deps: ModelDeps }> = async (app, { deps }) => {
  // `auto` has no creation time of its own: this server's start stands in for it.
  const started = Math.floor(Date.now() / 1000);

  const list = async (tenantId: string): Promise<Model[]> => {
    const [models, auto] = await Promise.all([deps.router.availableModels(tenantId), deps.router.autoModel(tenantId)]);
    return [
      ...(auto === undefined ? [] : [{ id: 'auto', object: 'model' as const, created: started, owned_by: 'gateway' }]),
      ...models.map((m) => {
        const kind = kindOf(m);
        return { id: m.id, object: 'model' as const, created: m.created, owned_by: m.ownedBy, ...(kind ? { kind } : {}) };
      }),
      ...deps.builtIn.map((m) => ({
        id: m.id,
        object: 'model' as const,
        created: started,
        owned_by: 'gateway',
        description: m.description,
        kind: 'embedding' as const,
      })),
    ];
  };

  app.get('/models', { config: { access: 'tenant' }, schema: { response: { 200: ModelList, ...problems(401) } } }, async (request) => ({
    object: 'list' as const,
    data: await list(principalOf(request).tenantId),
  }));

  // GET /models/{id} (the SDK's models.retrieve): the list's record. A wildcard, since
  // engines name models with slashes and colons (`library/llama3:8b`, `org/model`),
  // sent as they are or percent-encoded (the SDK encodes them). A model the caller
  // cannot use now is a 404, in OpenAI's words: whether another tenant has it is not said.
  app.get(
    '/models/*',
    { config: { access: 'tenant' }, schema: { params: ModelParams, response: { 200: Model, ...problems(401, 404) } } },
    async (request) => {
      const id = request.params['*'];
      const model = (await list(principalOf(request).tenantId)).find((m) => m.id === id);
      if (!model) throw new AppError('NOT_FOUND', `The model '${id}' does not exist or you do not have access to it.`);
      return model;
    },
  );
};
