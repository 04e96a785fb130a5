// The MCP project's own conformance suite, `server` mode, both protocol eras, against
// /api/llm/v1/mcp/everything of a real gateway that fronts the SDK conformance fixture
// (mcp-conformance/everything-server.ts) registered through the API on loopback. The
// suite itself decides pass/fail against mcp-conformance/expected-failures.<era>.yaml:
// it exits non-zero on a failure not listed there AND on a listed one that now passes.
// How to run it and what is expected to fail: docs/mcp-conformance.md.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { TEST_TMP } from '../helpers/paths.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startEverythingServer, type EverythingServer } from './mcp-conformance/everything-server.js';
import { runConformance, startKeyProxy, type Era, type KeyProxy } from './mcp-conformance/suite.js';

describe('MCP conformance suite', () => {
  let gw: TestGateway;
  let world: World;
  let fixture: EverythingServer;
  let proxy: KeyProxy;
  let results: string;
  let keepResults = false;

  before(async () => {
    fixture = await startEverythingServer();
    // The key is known only after seeding: the proxy reads it per request.
    proxy = await startKeyProxy(() => world.a.key.key);
    // The suite sends Origin: its own URL's origin; an operator would allow that origin.
    gw = await startGateway({ GATEWAY_CORS_ORIGINS: proxy.origin });
    proxy.target = `${gw.url}/api/llm/v1/mcp/everything`;
    world = await seedWorld(gw, 'mcp-conformance');
    const created = await gw.request('POST', '/api/llm/v1/mcp/servers', {
      token: world.platform.admin.token,
      json: { name: 'everything', url: fixture.url, auth: { type: 'none' }, tenantIds: [world.a.tenantId] },
    });
    assert.equal(created.status, 201, created.text);
    const granted = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/api-keys/${world.a.key.id}`, {
      token: world.a.admin.token,
      json: { mcp: { allow: ['everything/*'] } },
    });
    assert.equal(granted.status, 200, granted.text);
    results = mkdtempSync(path.join(TEST_TMP, 'mcp-conformance-'));
  });
  after(async () => {
    await proxy?.close();
    await gw?.close();
    await fixture?.close();
    // A failed run keeps the suite's checks.json files (their path is in the failure message).
    if (results && !keepResults) rmSync(results, { recursive: true, force: true });
  });

  for (const era of ['2025-11-25', '2026-07-28'] as Era[]) {
    it(`passes the ${era} requirements except the listed expected failures, none of which passes`, async () => {
      const run = await runConformance(proxy.url, era, path.join(results, era));
      keepResults ||= run.status !== 0;
      assert.match(run.output, /Running requirements/, run.output);
      assert.equal(run.status, 0, `conformance ${era} failed (checks in ${results}/${era}):\n${run.output.slice(-6000)}`);
      assert.match(run.output, /Baseline check passed/);
    });
  }
});
