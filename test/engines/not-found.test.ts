// Issue 26: what a 404 from an engine means. A model the node does not have
// (model_not_found: the router may try another node) and an endpoint the node does
// not have (endpoint_missing: a 400 naming it) are told apart by the answer's body,
// in the words real servers use. Neither may be read as the other.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statusError } from '../../src/engines/http/errors.js';

const ctx = { label: 'openai node http://10.0.0.5:8000', secrets: [] };

describe('engine 404s: model or endpoint', () => {
  const modelMissing: [string, string][] = [
    [
      'OpenAI',
      JSON.stringify({ error: { message: 'The model `gpt-9` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }),
    ],
    ['vLLM', JSON.stringify({ object: 'error', message: 'The model `gpt-9` does not exist.', type: 'NotFoundError', code: 404 })],
    ['Ollama', JSON.stringify({ error: 'model "gpt-9" not found, try pulling it first' })],
    ['LM Studio', JSON.stringify({ error: { message: 'Model not found: gpt-9' } })],
  ];
  for (const [server, body] of modelMissing) {
    it(`${server}'s missing model is model_not_found`, () => {
      assert.equal(statusError(ctx, 404, body, 'gpt-9', '/v1/chat/completions').failure, 'model_not_found');
    });
  }

  const endpointMissing: [string, string][] = [
    ['FastAPI (vLLM)', JSON.stringify({ detail: 'Not Found' })],
    ['Go (Ollama)', '404 page not found'],
    ['llama.cpp server', JSON.stringify({ error: { code: 404, message: 'File Not Found', type: 'not_found_error' } })],
    ['Express', '<!DOCTYPE html><html><body><pre>Cannot POST /v1/embeddings</pre></body></html>'],
    [
      'OpenAI, chat-only model',
      JSON.stringify({ error: { message: 'This is a chat model and not supported in the v1/completions endpoint.' } }),
    ],
    ['an empty body', ''],
  ];
  for (const [server, body] of endpointMissing) {
    it(`${server}'s 404 is endpoint_missing, naming the path`, () => {
      const error = statusError(ctx, 404, body, 'gpt-9', '/v1/embeddings');
      assert.equal(error.failure, 'endpoint_missing', error.message);
      assert.equal(error.options.endpoint, '/v1/embeddings');
      assert.equal(error.retryable, false);
    });
  }

  it('a model whose own name reads like a failure does not decide', () => {
    const error = statusError(ctx, 404, JSON.stringify({ detail: 'Not Found' }), 'model-not-found', '/v1/embeddings');
    assert.equal(error.failure, 'endpoint_missing');
  });

  it('other refusals stay what they were', () => {
    assert.equal(statusError(ctx, 400, '{}', 'gpt-9', '/v1/chat/completions').failure, 'rejected');
    assert.equal(statusError(ctx, 429, '{}', 'gpt-9', '/v1/chat/completions').failure, 'overloaded');
    assert.equal(statusError(ctx, 502, '{}', 'gpt-9', '/v1/chat/completions').failure, 'upstream_error');
  });
});
