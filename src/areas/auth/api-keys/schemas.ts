// API keys on the wire (spec 2.1, 2.2): the record, the create body and the path
// parameters, as TypeBox schemas; the TypeScript types are derived from them.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text, Timestamp } from '../../schemas.js';
import { LimitsInput, LimitsRecord } from '../../../platform/rate-limits/limits.js';
import { McpGrantList } from '../../../platform/mcp-grants.js';

// The one set of rules for a new key: the create body's schema is built from these, and
// every path that creates a key (route, CLI, control socket) runs checkNewApiKey.
// Scopes are labels such as `llm:read`; they are stored and forwarded, not enforced (spec 5.3).
export const API_KEY_LIMITS = {
  nameMaxLength: 200,
  customerIdMaxLength: 200,
  maxScopes: 50,
  scopeMaxLength: 100,
  scopePattern: '^[A-Za-z0-9][A-Za-z0-9:._*/-]*$',
} as const;

const Scope = Type.String({ minLength: 1, maxLength: API_KEY_LIMITS.scopeMaxLength, pattern: API_KEY_LIMITS.scopePattern });

export const ApiKeyStatus = Type.Union([Type.Literal('active'), Type.Literal('revoked')]);

const recordFields = {
  id: Type.String(),
  name: Type.String(),
  maskedKey: Type.String(),
  status: ApiKeyStatus,
  // A JSON-encoded array, as the spec requires: clients parse it.
  scopes: Type.String({ description: 'JSON-encoded array of strings' }),
  createdAt: Timestamp,
  expiresAt: Type.Optional(Timestamp),
  customerId: Type.Optional(Type.String()),
  lastUsedAt: Type.Union([Timestamp, Type.Null()]),
  /** Rate limits and token budgets set on the key; {} when none. */
  limits: LimitsRecord,
  /** The MCP tools the key may see and call (`server/*`, `server/tool`); `allow: []` when none. */
  mcp: Type.Object({ allow: McpGrantList }),
};
// Two schemas on purpose: the serializer drops any field a schema does not name,
// so the plaintext `key` cannot leak from list, get, revoke or activate.
/** The record of spec 2.2, without the plaintext. */
export const ApiKeyRecord = Type.Object(recordFields);
export type ApiKeyRecord = Static<typeof ApiKeyRecord>;
/** The answer to a create: the only time the plaintext exists outside the client. */
export const CreatedApiKey = Type.Object({ ...recordFields, key: Type.String() });
export type CreatedApiKey = Static<typeof CreatedApiKey>;

export const NewApiKey = Type.Object({
  name: Text(API_KEY_LIMITS.nameMaxLength),
  scopes: Type.Optional(Type.Array(Scope, { maxItems: API_KEY_LIMITS.maxScopes })),
  expiresAt: Type.Optional(Timestamp),
  customerId: Type.Optional(Text(API_KEY_LIMITS.customerIdMaxLength)),
});
export type NewApiKey = Static<typeof NewApiKey>;

/**
 * PATCH …/api-keys/{keyId}: changes only what it names, at least one field. `limits`
 * replaces the key's (`{}` or null: none); `mcp` its MCP grant (`{allow: []}` or null: none).
 */
export const ApiKeyPatch = Type.Object(
  {
    limits: Type.Optional(Type.Union([LimitsInput, Type.Null()])),
    mcp: Type.Optional(Type.Union([Type.Object({ allow: McpGrantList }, { additionalProperties: false }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type ApiKeyPatch = Static<typeof ApiKeyPatch>;

export const TenantParams = Type.Object({ tenantId: Type.String() });
export const KeyParams = Type.Object({ tenantId: Type.String(), keyId: Type.String() });
