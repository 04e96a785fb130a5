// Response shapes of sign-in: the user object (spec 2.4) and the session that
// login, refresh and verify-2fa all answer with.
import { Type } from '@fastify/type-provider-typebox';
import { Timestamp } from '../../schemas.js';
import { UserRecord } from '../users/schemas.js';

// One user object everywhere: login, refresh, verify-2fa, /me and user management.
export const UserSchema = UserRecord;

/** Login's answer: either a session, or (two-factor users) a challenge and no token. */
export const LoginResponse = Type.Object({
  token: Type.Optional(Type.String()),
  refreshToken: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Timestamp),
  user: Type.Optional(UserSchema),
  requiresTwoFactor: Type.Optional(Type.Boolean()),
  userId: Type.Optional(Type.String()),
  twoFactorToken: Type.Optional(Type.String()),
});

export const SessionResponse = Type.Object({
  token: Type.String(),
  refreshToken: Type.String(),
  expiresAt: Timestamp,
  user: UserSchema,
});
