// POST /api/llm/v1/completions: OpenAI's legacy text completions, for the tools
// that still speak it. `openai` nodes answer on their own /v1/completions; the other
// engines (ollama, local) through chat, the prompt as one user message. Prompts and
// completions are never logged.
import { SERVER_TIMING, serverTiming } from '../server-timing.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { CompletionCall, completeOn, NO_TOKENS, statusOf, type CompletionDeps } from './call.js';
import { usageOf } from './usage.js';
import { completionBody, newCompletion } from './frames.js';
import { completionStream } from './stream.js';
import { CompletionBody, TextCompletion } from './schemas.js';

export const completionRoutes: FastifyPluginAsyncTypebox<{ deps: CompletionDeps }> = async (app, { deps }) => {
  app.post(
    '/completions',
    {
      config: { access: 'tenant' },
      schema: { body: CompletionBody, response: { 200: TextCompletion, ...problems(400, 401, 403, 404, 503) } },
    },
    async (request, reply) => {
      const call = new CompletionCall(deps, principalOf(request), String(request.id), request.body);
      let model: string;
      try {
        model = await deps.router.resolveModel(call.tenantId, request.body.model ?? 'auto');
      } catch (error) {
        if (statusOf(error) === 'unavailable') call.record(request.body.model ?? 'auto', null, 'unavailable', NO_TOKENS);
        throw error;
      }
      if (call.stream) {
        await completionStream(call, model, reply);
        return reply;
      }
      const client = deps.calls.watch(reply.raw);
      try {
        const { value: result, lease } = await deps.router.dispatch(call.tenantId, model, (lease) =>
          completeOn(lease.engine, call.engineRequest(model, client.signal)),
        );
        lease.release('ok');
        const usage = await usageOf(result.usage, call.prompts, result.choices.map((c) => c.text).join(''));
        if (client.gone()) {
          call.record(model, lease.node.id, 'client_closed', usage);
          reply.hijack();
          return reply;
        }
        call.record(model, lease.node.id, 'ok', usage);
        reply.header(SERVER_TIMING, serverTiming(reply, lease.engineMs, false, undefined));
        return completionBody(newCompletion(model), result.choices, usage);
      } catch (error) {
        await call.failedBeforeAnswer(model, error, client, reply);
        return reply;
      } finally {
        client.dispose();
      }
    },
  );
};
