// Single sign-on on the wire: a tenant's connection to an OpenID provider (the record,
// the bodies that create and change one), discovery by e-mail, and the parameters of
// the sign-in and logout routes. TypeBox schemas; the TypeScript types are derived.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text, Timestamp } from '../../schemas.js';

export const TOKEN_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;
export type TokenAuthMethod = (typeof TOKEN_AUTH_METHODS)[number];
export const MAPPED_ROLES = ['admin', 'member'] as const;
export type MappedRole = (typeof MAPPED_ROLES)[number];

const TokenAuth = Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')], {
  description: 'How the client authenticates at the token endpoint (Okta apps often need client_secret_post).',
});
// RFC 6749 §3.3 scope-token: printable ASCII but space, `"` and `\`.
const Scope = Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' });
const Domain = Type.String({
  minLength: 3,
  maxLength: 253,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$',
});
// A claim name: plain (`groups`, `oid`) or namespaced (`https://example.com/groups`).
const ClaimName = Type.String({ minLength: 1, maxLength: 200, pattern: '^\\S+$' });
const RoleMapping = Type.Record(
  Type.String({ minLength: 1, maxLength: 256 }),
  Type.Union([Type.Literal('admin'), Type.Literal('member')]),
  { maxProperties: 200, description: 'IdP group → role. Roles follow the groups at every sign-in; never platform_admin.' },
);

/** A connection as the API shows it: the client secret is write-only and never shown. */
export const SsoConnection = Type.Object({
  /** sso_… */
  id: Type.String(),
  tenantId: Type.String(),
  name: Type.String(),
  issuer: Type.String(),
  clientId: Type.String(),
  tokenEndpointAuthMethod: TokenAuth,
  scopes: Type.Array(Type.String()),
  allowedEmailDomains: Type.Array(Type.String()),
  groupsClaim: Type.String(),
  roleMapping: Type.Record(Type.String(), Type.String()),
  subjectClaim: Type.String(),
  jit: Type.Boolean(),
  ssoOnly: Type.Boolean(),
  trustIdpMfa: Type.Boolean(),
  enabled: Type.Boolean(),
  /** What the admin registers at the IdP as the redirect (sign-in) URI: one per connection. */
  redirectUri: Type.String(),
  /** Where the IdP may send the browser after sign-out (register it as the post-logout redirect URI). */
  postLogoutRedirectUri: Type.String(),
  /** What to register at the IdP as the back-channel logout URI. */
  backchannelLogoutUri: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type SsoConnection = Static<typeof SsoConnection>;
export const SsoConnectionList = Type.Object({ data: Type.Array(SsoConnection) });

const Fields = {
  name: Text(100),
  issuer: Type.String({ minLength: 1, maxLength: 2000, description: 'The tenant-specific issuer; discovery is read from it.' }),
  clientId: Type.String({ minLength: 1, maxLength: 1000 }),
  clientSecret: Type.String({ minLength: 1, maxLength: 8192, description: 'Write-only; stored encrypted.' }),
  tokenEndpointAuthMethod: TokenAuth,
  scopes: Type.Array(Scope, { minItems: 1, maxItems: 30, uniqueItems: true }),
  allowedEmailDomains: Type.Array(Domain, { maxItems: 100, uniqueItems: true }),
  groupsClaim: ClaimName,
  roleMapping: RoleMapping,
  subjectClaim: ClaimName,
  jit: Type.Boolean(),
  ssoOnly: Type.Boolean(),
  trustIdpMfa: Type.Boolean(),
  enabled: Type.Boolean(),
};

export const NewSsoConnection = Type.Object({
  name: Fields.name,
  issuer: Fields.issuer,
  clientId: Fields.clientId,
  clientSecret: Fields.clientSecret,
  tokenEndpointAuthMethod: Type.Optional(Fields.tokenEndpointAuthMethod),
  scopes: Type.Optional(Fields.scopes),
  allowedEmailDomains: Type.Optional(Fields.allowedEmailDomains),
  groupsClaim: Type.Optional(Fields.groupsClaim),
  roleMapping: Type.Optional(Fields.roleMapping),
  subjectClaim: Type.Optional(Fields.subjectClaim),
  jit: Type.Optional(Fields.jit),
  ssoOnly: Type.Optional(Fields.ssoOnly),
  trustIdpMfa: Type.Optional(Fields.trustIdpMfa),
  enabled: Type.Optional(Fields.enabled),
});
export type NewSsoConnection = Static<typeof NewSsoConnection>;

export const SsoConnectionPatch = Type.Partial(Type.Object(Fields));
export type SsoConnectionPatch = Static<typeof SsoConnectionPatch>;

export const ConnectionParams = Type.Object({ tenantId: Type.String(), connectionId: Type.String() });
export const TenantParams = Type.Object({ tenantId: Type.String() });
export const SignInParams = Type.Object({ connectionId: Type.String() });
export const StartQuery = Type.Object({
  returnTo: Type.Optional(Type.String({ maxLength: 2000, description: 'A path on this gateway (relative, starting with one /).' })),
});
/** What the IdP sends back: every field is optional to the schema, the callback judges them. */
export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  iss: Type.Optional(Type.String({ maxLength: 2000 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
  error_description: Type.Optional(Type.String({ maxLength: 2000 })),
  session_state: Type.Optional(Type.String({ maxLength: 512 })),
});

export const DiscoverBody = Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }) });
/** The same shape whether or not a connection serves the address: an empty list says "sign in with a password". */
export const DiscoverResponse = Type.Object({
  connections: Type.Array(
    Type.Object({ id: Type.String(), name: Type.String(), startUrl: Type.String({ description: 'Navigate the browser here.' }) }),
  ),
});
export type DiscoverResponse = Static<typeof DiscoverResponse>;

export const BackchannelBody = Type.Object({ logout_token: Type.String({ minLength: 1, maxLength: 16_384 }) });
