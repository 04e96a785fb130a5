// The SCIM routes' request schemas. Deliberately loose: SCIM attribute names are
// case-insensitive and clients send strings for booleans (Entra's "False"), so the
// services read and check bodies themselves (users.ts, groups.ts, patch.ts) and answer
// in SCIM's error schema. These name the common fields for the API document and bound
// what the edge accepts.
import { Type } from '@fastify/type-provider-typebox';
import { SCIM_LIMITS } from './protocol.js';

const Schemas = Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10, description: 'The schema URNs of the body.' });
const Name = Type.String({ maxLength: SCIM_LIMITS.maxNameLength });
const Bool = Type.Union([Type.Boolean(), Type.String({ maxLength: 5 })], {
  description: 'A boolean; "True" and "False" are accepted too.',
});

export const UserBody = Type.Object(
  {
    schemas: Type.Optional(Schemas),
    userName: Type.Optional(Name),
    externalId: Type.Optional(Type.Union([Name, Type.Null()])),
    displayName: Type.Optional(Type.Union([Name, Type.Null()])),
    active: Type.Optional(Bool),
    name: Type.Optional(
      Type.Object({
        givenName: Type.Optional(Type.String({ maxLength: 1024 })),
        familyName: Type.Optional(Type.String({ maxLength: 1024 })),
      }),
    ),
    emails: Type.Optional(
      Type.Array(
        Type.Object({
          value: Type.Optional(Type.String({ maxLength: 254 })),
          type: Type.Optional(Type.String({ maxLength: 64 })),
          primary: Type.Optional(Bool),
        }),
        { maxItems: 20 },
      ),
    ),
  },
  { description: 'A SCIM User (RFC 7643 §4.1): see docs/scim.md for how its attributes map onto the user.' },
);

export const GroupBody = Type.Object(
  {
    schemas: Type.Optional(Schemas),
    displayName: Type.Optional(Name),
    externalId: Type.Optional(Type.Union([Name, Type.Null()])),
    members: Type.Optional(
      Type.Array(
        Type.Object({ value: Type.Optional(Type.String({ maxLength: 64 })), type: Type.Optional(Type.String({ maxLength: 16 })) }),
        {
          maxItems: SCIM_LIMITS.maxMembers,
        },
      ),
    ),
  },
  { description: 'A SCIM Group (RFC 7643 §4.2).' },
);

export const PatchBody = Type.Object(
  {
    schemas: Type.Optional(Schemas),
    Operations: Type.Optional(
      Type.Array(
        Type.Object({
          op: Type.Optional(Type.String({ maxLength: 10, description: 'add, replace or remove, in any case.' })),
          path: Type.Optional(Type.String({ maxLength: 1000 })),
          value: Type.Optional(Type.Unknown()),
        }),
        { maxItems: SCIM_LIMITS.maxOperations },
      ),
    ),
  },
  { description: 'A PatchOp (RFC 7644 §3.5.2).' },
);

export const ListQuery = Type.Object({
  filter: Type.Optional(Type.String({ maxLength: SCIM_LIMITS.maxFilterLength, description: 'attribute eq "value", joined by and.' })),
  startIndex: Type.Optional(Type.String({ maxLength: 12, description: '1-based.' })),
  count: Type.Optional(Type.String({ maxLength: 12, description: `At most ${SCIM_LIMITS.maxResults}.` })),
  attributes: Type.Optional(Type.String({ maxLength: 1000 })),
  excludedAttributes: Type.Optional(Type.String({ maxLength: 1000 })),
});

export const ReadQuery = Type.Object({
  attributes: Type.Optional(Type.String({ maxLength: 1000 })),
  excludedAttributes: Type.Optional(Type.String({ maxLength: 1000 })),
});

export const UserParams = Type.Object({ scimUserId: Type.String({ maxLength: 200 }) });
export const GroupParams = Type.Object({ scimGroupId: Type.String({ maxLength: 200 }) });
export const ResourceTypeParams = Type.Object({ resourceTypeId: Type.String({ maxLength: 200 }) });
export const SchemaParams = Type.Object({ schemaId: Type.String({ maxLength: 200 }) });
