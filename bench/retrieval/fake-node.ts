// Child process: the test suite's fake OpenAI-compatible engine (test/helpers/fake-engines)
// as the scale benchmark's one compute node. It answers chat at once and serves
// /v1/embeddings with deterministic vectors, so what the benchmark measures is the
// gateway's ingestion and chat path, not a model. Its own process, so it shares no
// event loop with the gateway under test.
import { startFakeOpenAI } from '../../test/helpers/fake-engines/index.js';
import { announceReady } from '../support/children.js';

/** The chat model the load asks for, and the embedding model a collection names. */
export const FAKE_CHAT_MODEL = 'bench-chat';
export const FAKE_EMBEDDING_MODEL = 'bench-embed';

// Run as a child (startChild), not when imported for the model names.
if (process.send) {
  process.setSourceMapsEnabled(false);
  const fake = await startFakeOpenAI({ models: [FAKE_CHAT_MODEL, FAKE_EMBEDDING_MODEL], reply: 'Hello! How can I help you today?' });
  // The fake keeps every request for tests to inspect; a benchmark sends far too many to keep.
  setInterval(() => {
    fake.requests.length = 0;
  }, 1000).unref();
  announceReady({ url: fake.url }, () => ({ chatRequests: fake.chatRequests() }));
}
