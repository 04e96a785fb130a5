// Users on the wire: the user object (spec 2.4, the same in login, /me and user
// management), the bodies that create and change one, and the path parameters.
// TypeBox schemas; the TypeScript types are derived from them.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { ROLES, type RoleName as Role } from '../../../platform/identity.js';
import { Timestamp } from '../../schemas.js';

// Usernames never contain '@', so the login field is unambiguous.
export const USERNAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$';
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

// One literal per role (anyOf/const, as a hand-written union would be). Unsafe only
// names the static type, which TypeBox cannot infer from a mapped array.
export const RoleName = Type.Unsafe<Role>(Type.Union(ROLES.map((role) => Type.Literal(role))));
const Roles = Type.Array(RoleName, { minItems: 1, maxItems: ROLES.length });
export const UserStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);
// Any character but NUL: a password is hashed, never shown, and its owner chooses it.
export const Password = Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, text: 'verbatim' });
const Email = Type.String({ minLength: 3, maxLength: 254 });

/** The user object of the login response (spec 2.4) and of /api/auth/me; never the password hash. */
export const UserRecord = Type.Object({
  id: Type.String(),
  username: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  /** Whether the address is verified: set by an administrator, or by the IdP of the SSO sign-in that created the user. SSO links an existing account by e-mail only when it is. */
  emailVerified: Type.Boolean(),
  tenantId: Type.String(),
  // Plain strings on the way out: the roles were checked against ROLES when they were stored.
  roles: Type.Array(Type.String()),
  twoFactorEnabled: Type.Boolean(),
  status: UserStatus,
  createdAt: Timestamp,
});
export type User = Static<typeof UserRecord>;

export const NewUserBody = Type.Object({
  username: Type.String({ pattern: USERNAME_PATTERN }),
  password: Password,
  email: Type.Optional(Email),
  /** The administrator vouches for the address (default false): SSO may then link the account by it. */
  emailVerified: Type.Optional(Type.Boolean()),
  roles: Type.Optional(Roles),
});
export type NewUserBody = Static<typeof NewUserBody>;

export const UserPatch = Type.Object({
  email: Type.Optional(Type.Union([Email, Type.Null()])),
  /** A changed address is unverified unless this says otherwise. */
  emailVerified: Type.Optional(Type.Boolean()),
  roles: Type.Optional(Roles),
  status: Type.Optional(UserStatus),
  password: Type.Optional(Password),
});
export type UserPatch = Static<typeof UserPatch>;

export const TenantParams = Type.Object({ tenantId: Type.String() });
export const UserParams = Type.Object({ tenantId: Type.String(), userId: Type.String() });
