// SCIM 2.0's names (RFC 7643, RFC 7644): schema URNs, the media type, the limits this
// service provider announces in /ServiceProviderConfig and holds to.
export const SCIM_MEDIA_TYPE = 'application/scim+json';

export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  enterpriseUser: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

export const SCIM_LIMITS = {
  /** Resources in one list answer at most (`count` above it is lowered to it, RFC 7644 §3.4.2.4). */
  maxResults: 200,
  /** What a list answers without `count`. */
  defaultCount: 100,
  /** Operations in one PATCH. */
  maxOperations: 1000,
  /** Bytes of one request body. */
  maxPayloadBytes: 1024 * 1024,
  /** Members of one group (a PUT's list, or after a PATCH). */
  maxMembers: 20_000,
  /** Characters of a filter. */
  maxFilterLength: 2000,
  /** Characters of userName, externalId, displayName. */
  maxNameLength: 256,
  /** Bytes of the profile attributes kept as sent (name, phoneNumbers, the enterprise extension…). */
  maxProfileBytes: 16 * 1024,
} as const;
