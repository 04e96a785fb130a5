// POST /api/llm/v1/chat/completions (spec 2.5, 2.6, 6.1): OpenAI-shaped chat for
// API keys and signed-in users. The router picks the node; this file only turns
// the request into an engine call and the engine's answer into the spec's shape.
// Prompts and completions are never logged.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { ChatCall, failureStatus, NO_TOKENS, type ChatDeps } from './call.js';
import { completeJson } from './complete.js';
import { completeStream } from './stream.js';
import { preloadTokenizer } from '../tokens/count.js';
import { ChatCompletion, ChatCompletionBody } from './schemas.js';
import { requestedFrameMode } from './frames.js';

export const chatRoutes: FastifyPluginAsyncTypebox<{ deps: ChatDeps }> = async (app, { deps }) => {
  let tokenizerLoading = false;

  app.post(
    '/chat/completions',
    {
      config: { access: 'tenant' },
      schema: { body: ChatCompletionBody, response: { 200: ChatCompletion, ...problems(400, 401, 403, 404, 503) } },
    },
    async (request, reply) => {
      if (!tokenizerLoading) {
        // Usage counting may need the tokenizer at any later request: its one-off load (a
        // ~100 ms event-loop stall) happens right after this first answer, rather than in
        // the middle of whichever later request first needs it.
        tokenizerLoading = true;
        reply.raw.once('close', preloadTokenizer);
      }
      const call = new ChatCall(deps, principalOf(request), String(request.id), request.body);
      let model: string;
      try {
        model = await deps.router.resolveModel(call.tenantId, request.body.model ?? 'auto');
      } catch (error) {
        // An unknown model (400) is the caller's mistake, not usage; no healthy node (503) is recorded.
        if (failureStatus(error) === 'unavailable') call.record(request.body.model ?? 'auto', null, 'unavailable', NO_TOKENS);
        throw error;
      }
      if (call.wantsGrounding) await call.ground();
      if (request.body.stream !== true) return completeJson(call, model, reply);
      // The request's own choice wins over the tenant's default, either way.
      const frameMode = requestedFrameMode(request.body.stream_options) ?? (await deps.router.settings(call.tenantId)).streamMetadataFrame;
      await completeStream(call, model, reply, frameMode);
      return reply;
    },
  );
};
