// The client-compatibility suite's world: a gateway in front of one fake
// OpenAI-compatible engine, a tenant whose streams use the `chunk` metadata frame
// (every frame a valid chat.completion.chunk, so any client's stream parser reads
// it), and an API key. Each client library under test/compat/ is pointed at
// `baseURL` with `key`, exactly as its README tells a user to point it at OpenAI.
import assert from 'node:assert/strict';
import { seedTenant, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver } from '../llm/chat-support.js';

export const MODEL = 'compat-model';
export const ANSWER = 'Fake answer to: hello there';

/** The function every tool-calling test offers, and the call the fake engine makes of it. */
export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
} as const;
export const WEATHER_CALL = { name: 'get_weather', arguments: '{"city":"Paris"}' };

/** The structured-output schema: the fake answers with its first enum value. */
export const FORECAST_SCHEMA = {
  type: 'object',
  properties: { sky: { type: 'string', enum: ['clear', 'cloudy'] } },
  required: ['sky'],
  additionalProperties: false,
} as const;

export interface CompatWorld {
  gw: TestGateway;
  fake: FakeEngine;
  key: string;
  baseURL: string;
  close(): Promise<void>;
}

export async function compatWorld(label: string): Promise<CompatWorld> {
  const fake = await startFakeOpenAI({ models: [MODEL] });
  const gw = await gatewayOver([fake]);
  const tenant = await seedTenant(gw, label);
  const admin = await tokenFor(gw, tenant.admin.id, tenant.tenantId);
  const patched = await gw.request('PATCH', `/api/auth/tenants/${tenant.tenantId}`, {
    token: admin,
    json: { streamMetadataFrame: 'chunk' },
  });
  assert.equal(patched.status, 200, patched.text);
  const { key } = await createApiKey(gw, tenant.tenantId, label);
  return {
    gw,
    fake,
    key,
    baseURL: `${gw.url}/api/llm/v1`,
    async close() {
      await gw.close();
      await fake.close();
    },
  };
}

/** The chat request the fake engine received last. */
export function lastChatBody(fake: FakeEngine): any {
  const chats = fake.requests.filter((r) => r.path.startsWith('/v1/chat/completions'));
  return chats.at(-1)?.body;
}
