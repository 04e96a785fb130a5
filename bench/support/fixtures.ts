// What the benchmark's instant upstream serves and what the load sends, shared by
// the parent and the child processes.

/** The one model the instant upstream lists. */
export const BENCH_MODEL = 'bench-model';

/** The answer, split the way a real engine streams it: one frame per token. */
export const REPLY_TOKENS = ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?'];
export const PROMPT_TOKENS = 9;

/** What a client sends the gateway (the gateway fills in max_tokens and temperature). */
export function gatewayRequestBody(stream: boolean): string {
  const body: Record<string, unknown> = { model: BENCH_MODEL, messages: [{ role: 'user', content: 'hi' }] };
  // Usage in the stream is what LangChain and the AI SDK ask for by default; the
  // direct and bare-proxy requests ask for it too, so every path carries the same frames.
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  return JSON.stringify(body);
}

/** The equivalent request sent straight to the upstream (direct and through the bare proxy). */
export function upstreamRequestBody(stream: boolean): string {
  const body: Record<string, unknown> = {
    model: BENCH_MODEL,
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 1024,
    temperature: 0.7,
  };
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  return JSON.stringify(body);
}
