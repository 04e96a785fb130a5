// /api/auth/tenants/{tenantId}/users: a tenant admin (or a platform admin)
// manages the tenant's users. Another tenant's admin gets 404, as if the
// tenant did not exist; a member gets 403.
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { ROLES } from '../../../platform/identity.js';
import { principalOf } from '../../guard.js';
import { problems, Timestamp } from '../../schemas.js';
import { createUserAs, getUser, listUsers, updateUser, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USERNAME_PATTERN } from './service.js';

const RoleName = Type.Union(ROLES.map((role) => Type.Literal(role)));
const Roles = Type.Array(RoleName, { minItems: 1, maxItems: ROLES.length });
const UserStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);
// Any character but NUL: a password is hashed, never shown, and its owner chooses it.
const Password = Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, text: 'verbatim' });
const Email = Type.String({ minLength: 3, maxLength: 254 });

// The user object of the login response (spec 2.4); never the password hash.
export const UserRecord = Type.Object({
  id: Type.String(),
  username: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  tenantId: Type.String(),
  roles: Type.Array(Type.String()),
  twoFactorEnabled: Type.Boolean(),
  status: UserStatus,
  createdAt: Timestamp,
});
const TenantParams = Type.Object({ tenantId: Type.String() });
const UserParams = Type.Object({ tenantId: Type.String(), userId: Type.String() });

export const userRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  app.get(
    '/tenants/:tenantId/users',
    { schema: { params: TenantParams, response: { 200: Type.Object({ data: Type.Array(UserRecord) }), ...problems(401, 403, 404) } } },
    async (request) => ({ data: await listUsers(db, principalOf(request), request.params.tenantId) }),
  );

  app.post(
    '/tenants/:tenantId/users',
    {
      schema: {
        params: TenantParams,
        body: Type.Object({
          username: Type.String({ pattern: USERNAME_PATTERN }),
          password: Password,
          email: Type.Optional(Email),
          roles: Type.Optional(Roles),
        }),
        response: { 201: UserRecord, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await createUserAs(db, principalOf(request), request.params.tenantId, request.body)),
  );

  app.get('/tenants/:tenantId/users/:userId', { schema: { params: UserParams, response: { 200: UserRecord, ...problems(401, 403, 404) } } }, async (request) =>
    getUser(db, principalOf(request), request.params.tenantId, request.params.userId),
  );

  app.patch(
    '/tenants/:tenantId/users/:userId',
    {
      schema: {
        params: UserParams,
        body: Type.Object({
          email: Type.Optional(Type.Union([Email, Type.Null()])),
          roles: Type.Optional(Roles),
          status: Type.Optional(UserStatus),
          password: Type.Optional(Password),
        }),
        response: { 200: UserRecord, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request) => updateUser(ctx, principalOf(request), request.params.tenantId, request.params.userId, request.body),
  );
};
