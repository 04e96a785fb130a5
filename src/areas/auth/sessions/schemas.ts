// Sign-in on the wire: the login and refresh bodies, the session that login,
// refresh and verify-2fa all answer with (spec 2.4), and the two-factor branch of
// login. TypeBox schemas; the TypeScript types are derived from them.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../schemas.js';
import { Password, UserRecord } from '../users/schemas.js';

// One user object everywhere: login, refresh, verify-2fa, /me and user management.
export const UserSchema = UserRecord;

// Spec 2.3: a field named `email` fails validation (the e-mail goes in `username`).
// Checked first, so that it is the error reported even when `username` is missing too
// (validation stops at the first error).
export const LoginBody = Type.Intersect([
  Type.Object({ email: Type.Optional(Type.Never()) }),
  Type.Object({
    // A username or an e-mail address (spec 2.3).
    username: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024, text: 'verbatim' }),
  }),
]);

// Refresh and logout accept an empty body: the cookie then carries the token.
export const RefreshBody = Type.Object({ refreshToken: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })) });

export const SessionResponse = Type.Object({
  token: Type.String(),
  refreshToken: Type.String(),
  expiresAt: Timestamp,
  user: UserSchema,
});
export type Session = Static<typeof SessionResponse>;

/** Login of a two-factor user: a challenge for verify-2fa, and no token yet. */
export const TwoFactorRequired = Type.Object({
  requiresTwoFactor: Type.Literal(true),
  userId: Type.String(),
  twoFactorToken: Type.String(),
});
export type TwoFactorRequired = Static<typeof TwoFactorRequired>;

/** Logout of a session an SSO sign-in started: where the browser signs out at the IdP too (id_token_hint, post_logout_redirect_uri). */
export const LogoutResponse = Type.Object({ endSessionUrl: Type.String() });

/** Login's answer: either a session, or (two-factor users) a challenge and no token. One object with every field optional, for the serializer. */
export const LoginResponse = Type.Object({
  token: Type.Optional(Type.String()),
  refreshToken: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Timestamp),
  user: Type.Optional(UserSchema),
  requiresTwoFactor: Type.Optional(Type.Boolean()),
  userId: Type.Optional(Type.String()),
  twoFactorToken: Type.Optional(Type.String()),
});

/** One signed-in session of the caller (a refresh-token family), for the Account page. */
export const SessionRecord = Type.Object({
  /** fam_…: what DELETE /api/auth/sessions/{sessionId} takes. */
  id: Type.String(),
  /** When it signed in. */
  createdAt: Timestamp,
  /** Its last sign-in or refresh (access tokens are not tracked request by request). */
  lastUsedAt: Timestamp,
  /** When its refresh token runs out unless it is refreshed. */
  expiresAt: Timestamp,
  /** The User-Agent and address it signed in from; null when not recorded. */
  userAgent: Type.Union([Type.String(), Type.Null()]),
  address: Type.Union([Type.String(), Type.Null()]),
  /** Whether the access token of this request was issued in it. */
  current: Type.Boolean(),
});
export type SessionRecord = Static<typeof SessionRecord>;
export const SessionList = Type.Object({ data: Type.Array(SessionRecord) });
export const SessionParams = Type.Object({ sessionId: Type.String({ maxLength: 64 }) });

/** POST /api/auth/password: the current password, and a new one under the rules of user creation. */
export const PasswordChange = Type.Object({
  currentPassword: Type.String({ minLength: 1, maxLength: 1024, text: 'verbatim' }),
  newPassword: Password,
});
export type PasswordChange = Static<typeof PasswordChange>;
