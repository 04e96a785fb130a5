// A tenant admin's node URL is held to the tenant deny list at every connection, not
// only when saved: a host name that passed the check and was later re-pointed at a
// private address (DNS rebinding) reaches nothing. Here `localhost` plays that name:
// the rows are written as if it had resolved elsewhere when they were saved.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { computeNodeRepository } from '../../src/areas/llm/nodes/repository.js';
import { EngineError } from '../../src/engines/types.js';
import { newId } from '../../src/platform/ids.js';
import type { UrlScope } from '../../src/areas/llm/outbound/url-guard.js';

describe('tenant deny list at connect time', () => {
  let gw: TestGateway;
  let tenantEngine: FakeEngine;
  let platformEngine: FakeEngine;
  let tenantId: string;
  const ids: Record<UrlScope, string> = { tenant: newId('computeNode'), platform: newId('computeNode') };

  before(async () => {
    tenantEngine = await startFakeOpenAI({ models: ['tenant-given'] });
    platformEngine = await startFakeOpenAI({ models: ['operator-given'] });
    // The default tenant deny list (loopback and private ranges); probes only when asked.
    gw = await startGateway({ GATEWAY_NODE_HEALTH_INTERVAL_SECONDS: '3600' });
    tenantId = (await seedTenant(gw, 'rebinding')).tenantId;
    for (const [scope, engine] of [
      ['tenant', tenantEngine],
      ['platform', platformEngine],
    ] as const) {
      await computeNodeRepository.insert(gw.ctx.db, {
        id: ids[scope],
        name: `${scope}-given`,
        engine: 'openai',
        url: engine.url.replace('127.0.0.1', 'localhost'),
        api_key_encrypted: null,
        tenant_ids: [tenantId],
        url_scope: scope,
        enabled: true,
        created_by: null,
      });
    }
    await gw.ctx.llm.nodes.reload();
  });
  after(async () => {
    await gw?.close();
    await Promise.all([tenantEngine?.close(), platformEngine?.close()]);
  });

  it("refuses every connection of a tenant admin's node to an address the tenant list denies, before a request is sent", async () => {
    const node = gw.ctx.llm.nodes.get(ids.tenant)!;
    await assert.rejects(
      node.engine.listModels(AbortSignal.timeout(5000)),
      (error: unknown) => error instanceof EngineError && /deny list/.test(error.message),
    );
    assert.equal(tenantEngine.requests.length, 0);
  });

  it('shows the refusal in the node health and serves none of its models', async () => {
    await gw.ctx.llm.nodes.refresh();
    const health = gw.ctx.llm.nodes.get(ids.tenant)!.health();
    assert.equal(health.status, 'unhealthy');
    assert.match(health.lastError ?? '', /deny list/);
    const models = (await gw.ctx.llm.router.availableModels(tenantId)).map((m) => m.id);
    assert.ok(!models.includes('tenant-given'));
    assert.equal(tenantEngine.requests.length, 0);
  });

  it("connects an operator's node to the same address (the platform list allows it)", async () => {
    assert.equal(gw.ctx.llm.nodes.get(ids.platform)!.health().status, 'healthy');
    assert.ok((await gw.ctx.llm.router.availableModels(tenantId)).some((m) => m.id === 'operator-given'));
    assert.ok(platformEngine.requests.length > 0);
  });
});
