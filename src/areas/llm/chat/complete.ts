// chat/completions without `stream`: one JSON answer (spec 2.6). The engine call
// is cancelled when the client goes away while the model is still generating.
import type { FastifyReply } from 'fastify';
import { completeUsage, generatedText } from '../tokens/count.js';
import type { ChatCall } from './call.js';
import { completionBody, newCompletion } from './frames.js';
import type { ChatCompletion } from './schemas.js';
import { SERVER_TIMING, serverTiming } from '../server-timing.js';

/** The answer, or undefined when the client left (the reply is then hijacked: nobody is there to read it). */
export async function completeJson(call: ChatCall, model: string, reply: FastifyReply): Promise<ChatCompletion | undefined> {
  const { router } = call.deps;
  const client = call.deps.calls.watch(reply.raw);
  try {
    const { value: result, lease } = await router.dispatch(call.tenantId, model, (lease) =>
      lease.engine.chat(call.engineRequest(model, client.signal)),
    );
    lease.release('ok');
    const usage = await completeUsage(result.usage, call.messages, generatedText(result));
    if (client.gone()) {
      call.record(model, lease.node.id, 'client_closed', usage);
      reply.hijack();
      return undefined;
    }
    call.record(model, lease.node.id, 'ok', usage);
    reply.header(SERVER_TIMING, serverTiming(reply, lease.engineMs, false, call.deps.observer));
    return completionBody(newCompletion(model), result, usage, call.grounding, call.options?.logprobs === true);
  } catch (error) {
    await call.failedBeforeAnswer(model, error, client, reply);
    return undefined;
  } finally {
    client.dispose();
  }
}
