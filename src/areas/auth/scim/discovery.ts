// The discovery endpoints (RFC 7644 §4): what this service provider supports, its two
// resource types and their schemas (RFC 7643 §5-§7), as static documents.
import { SCHEMA, SCIM_LIMITS } from './protocol.js';
import type { BaseUrl } from './users.js';

export function serviceProviderConfig(base: BaseUrl) {
  return {
    schemas: [SCHEMA.serviceProviderConfig],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_LIMITS.maxResults },
    changePassword: { supported: true },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'SCIM token',
        description:
          "A tenant's SCIM token (scim_…) as Authorization: Bearer, made by a tenant admin at /api/auth/tenants/{tenantId}/scim-tokens.",
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: BaseUrl) {
  return [
    {
      schemas: [SCHEMA.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A person of the tenant',
      schema: SCHEMA.user,
      schemaExtensions: [{ schema: SCHEMA.enterpriseUser, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [SCHEMA.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'A group of the tenant’s users; its displayName is what the SSO role mapping names',
      schema: SCHEMA.group,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

type Attribute = Record<string, unknown>;

const attr = (
  name: string,
  type: string,
  options: {
    multiValued?: boolean;
    required?: boolean;
    caseExact?: boolean;
    mutability?: string;
    returned?: string;
    uniqueness?: string;
    subAttributes?: Attribute[];
    description?: string;
  } = {},
): Attribute => ({
  name,
  type,
  multiValued: options.multiValued ?? false,
  ...(options.description ? { description: options.description } : {}),
  required: options.required ?? false,
  caseExact: options.caseExact ?? false,
  mutability: options.mutability ?? 'readWrite',
  returned: options.returned ?? 'default',
  uniqueness: options.uniqueness ?? 'none',
  ...(options.subAttributes ? { subAttributes: options.subAttributes } : {}),
});

const multi = (name: string, extra: Attribute[] = []) =>
  attr(name, 'complex', {
    multiValued: true,
    subAttributes: [attr('value', 'string'), attr('display', 'string'), attr('type', 'string'), attr('primary', 'boolean'), ...extra],
  });

const USER_ATTRIBUTES: Attribute[] = [
  attr('userName', 'string', {
    required: true,
    uniqueness: 'server',
    description: 'Unique on the whole platform (sign-in names no tenant); the person signs in with it.',
  }),
  attr('externalId', 'string', { caseExact: true, description: "The identity provider's id of the person; unique in the tenant." }),
  attr('name', 'complex', {
    subAttributes: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map((n) =>
      attr(n, 'string'),
    ),
  }),
  attr('displayName', 'string'),
  ...['nickName', 'profileUrl', 'title', 'userType', 'preferredLanguage', 'locale', 'timezone'].map((n) =>
    attr(n, n === 'profileUrl' ? 'reference' : 'string'),
  ),
  attr('active', 'boolean', { description: 'false ends every session, access token and API key of the user at once.' }),
  attr('password', 'string', { mutability: 'writeOnly', returned: 'never' }),
  multi('emails'),
  multi('phoneNumbers'),
  multi('ims'),
  multi('photos'),
  attr('addresses', 'complex', {
    multiValued: true,
    subAttributes: ['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country', 'type']
      .map((n) => attr(n, 'string'))
      .concat(attr('primary', 'boolean')),
  }),
  attr('groups', 'complex', {
    multiValued: true,
    mutability: 'readOnly',
    subAttributes: [attr('value', 'string', { mutability: 'readOnly' }), attr('display', 'string', { mutability: 'readOnly' })],
  }),
  attr('roles', 'complex', {
    multiValued: true,
    mutability: 'readOnly',
    description: 'The platform roles of the user; only the SSO role mapping of groups changes them.',
    subAttributes: [attr('value', 'string', { mutability: 'readOnly' })],
  }),
];

const ENTERPRISE_ATTRIBUTES: Attribute[] = [
  ...['employeeNumber', 'costCenter', 'organization', 'division', 'department'].map((n) => attr(n, 'string')),
  attr('manager', 'complex', { subAttributes: [attr('value', 'string'), attr('displayName', 'string', { mutability: 'readOnly' })] }),
];

const GROUP_ATTRIBUTES: Attribute[] = [
  attr('displayName', 'string', {
    required: true,
    uniqueness: 'server',
    description: 'Unique in the tenant, compared case-insensitively.',
  }),
  attr('externalId', 'string', { caseExact: true }),
  attr('members', 'complex', {
    multiValued: true,
    subAttributes: [
      attr('value', 'string', { mutability: 'immutable' }),
      attr('display', 'string', { mutability: 'readOnly' }),
      attr('type', 'string', { mutability: 'immutable' }),
    ],
  }),
];

export function schemas(base: BaseUrl) {
  const schema = (id: string, name: string, description: string, attributes: Attribute[]) => ({
    schemas: [SCHEMA.schema],
    id,
    name,
    description,
    attributes,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
  });
  return [
    schema(SCHEMA.user, 'User', 'User Account', USER_ATTRIBUTES),
    schema(SCHEMA.enterpriseUser, 'EnterpriseUser', 'Enterprise User', ENTERPRISE_ATTRIBUTES),
    schema(SCHEMA.group, 'Group', 'Group', GROUP_ATTRIBUTES),
  ];
}
