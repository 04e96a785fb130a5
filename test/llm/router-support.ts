// Shared by the llm tests: chat through a router lease, node lookups.
import type { TestGateway } from '../helpers/gateway.js';
import type { Lease } from '../../src/areas/llm/router/types.js';
import type { NodeRuntime } from '../../src/areas/llm/router/node-runtime.js';

/** One real chat call on the leased node's engine. */
export function chatOn(lease: Lease, model: string) {
  return lease.engine.chat({
    model,
    messages: [{ role: 'user', content: 'hello there' }],
    maxTokens: 16,
    temperature: 0,
    signal: AbortSignal.timeout(5000),
  });
}

/** Dispatches one chat through the router and releases the lease; resolves with the node that answered. */
export async function ask(gw: TestGateway, tenantId: string, requested: string): Promise<string> {
  // As the chat handler does: `auto` becomes a real model id before any node sees it.
  const model = await gw.ctx.llm.router.resolveModel(tenantId, requested);
  const { value, lease } = await gw.ctx.llm.router.dispatch(tenantId, model, async (l) => {
    await chatOn(l, model);
    return l.node.name;
  });
  lease.release('ok');
  return value;
}

/** Dispatches and keeps the lease (the request stays outstanding). */
export async function hold(gw: TestGateway, tenantId: string, model: string): Promise<Lease> {
  const { lease } = await gw.ctx.llm.router.dispatch(tenantId, model, async (l) => {
    await chatOn(l, model);
    return null;
  });
  return lease;
}

export function nodeNamed(gw: TestGateway, name: string): NodeRuntime {
  const node = gw.ctx.llm.nodes.nodes().find((n) => n.definition.name === name);
  if (!node) throw new Error(`no node named ${name}`);
  return node;
}
