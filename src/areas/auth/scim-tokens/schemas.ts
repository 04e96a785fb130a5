// SCIM tokens on the wire: the record (never the token but in the answer to a create),
// the create body and the path parameters. TypeBox schemas; types derived from them.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text, Timestamp } from '../../schemas.js';

export const SCIM_TOKEN_NAME_MAX_LENGTH = 200;

const recordFields = {
  id: Type.String(),
  name: Type.String(),
  maskedToken: Type.String({ description: 'Start and end of the token, the middle elided.' }),
  createdAt: Timestamp,
  expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'Null: the token never expires.' }),
  lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'Recorded at most once a minute.' }),
};
// Two schemas on purpose: the serializer drops what a schema does not name, so the
// plaintext token cannot leak from the list.
export const ScimTokenRecord = Type.Object(recordFields);
export type ScimTokenRecord = Static<typeof ScimTokenRecord>;
export const CreatedScimToken = Type.Object({
  ...recordFields,
  token: Type.String({ description: 'The bearer token for the SCIM client: shown in this answer only.' }),
});
export type CreatedScimToken = Static<typeof CreatedScimToken>;

export const NewScimToken = Type.Object(
  {
    name: Text(SCIM_TOKEN_NAME_MAX_LENGTH),
    expiresAt: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type NewScimToken = Static<typeof NewScimToken>;

export const TenantParams = Type.Object({ tenantId: Type.String() });
export const ScimTokenParams = Type.Object({ tenantId: Type.String(), scimTokenId: Type.String() });
