// The legacy-casing rewrite lowercases route literals only: path parameters such
// as model or engine names keep their case (`Llama-3` is not `llama-3`).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LegacyCasing } from '../../src/gateway/legacy-casing.js';

describe('legacy route casing', () => {
  const literals = new LegacyCasing();
  for (const route of ['/api/auth/login', '/api/os/workspaces/:workspaceId', '/api/llm/v1/models/:model', '/health']) literals.add(route);

  it('lowercases the literals of registered routes', () => {
    assert.equal(literals.rewrite('/api/Auth/Login'), '/api/auth/login');
    assert.equal(literals.rewrite('/API/OS/Workspaces?x=Y'), '/api/os/workspaces?x=Y');
  });

  it('keeps the case of parameters and of anything that is not a literal', () => {
    assert.equal(literals.rewrite('/api/LLM/v1/Models/Llama-3'), '/api/llm/v1/models/Llama-3');
    assert.equal(literals.rewrite('/api/os/workspaces/ws_01ABC'), '/api/os/workspaces/ws_01ABC');
    assert.equal(literals.rewrite('/api/Unknown/Thing'), '/api/Unknown/Thing');
  });

  it('leaves paths outside /api alone', () => {
    assert.equal(literals.rewrite('/Health'), '/Health');
  });
});
