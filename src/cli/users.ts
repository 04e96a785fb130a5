// `gateway users …`
import { checkNewUser, createUser, tenantUsers, type NewUser } from '../areas/auth/users/service.js';
import type { User } from '../areas/auth/users/schemas.js';
import type { RoleName } from '../platform/identity.js';
import { fields, str, table, timestamp, type CommandArgs, type CommandSpec } from './command-spec.js';

function newUser(args: CommandArgs): NewUser {
  const roles: RoleName[] = args['platform-admin'] ? ['platform_admin', 'admin'] : args.admin ? ['admin'] : ['member'];
  const email = str(args, 'email');
  return {
    tenantId: str(args, 'tenant')!,
    username: str(args, 'username')!,
    password: str(args, 'password')!,
    roles,
    ...(email !== undefined ? { email } : {}),
  };
}

export const userCommands: CommandSpec[] = [
  {
    name: 'users create',
    summary: 'Create a user in a tenant (a member unless --admin or --platform-admin).',
    options: {
      tenant: { type: 'string', required: true, value: '<tenantId>', description: 'The tenant the user belongs to (ten_…).' },
      username: {
        type: 'string',
        required: true,
        value: '<username>',
        description: 'Login name: 2-64 letters, digits, dots, dashes or underscores.',
      },
      password: {
        type: 'string',
        required: true,
        value: '<password>',
        description: 'At least 12 characters. Prefer --password-stdin (prompts at a terminal): arguments are visible to other local users.',
      },
      email: { type: 'string', value: '<email>', description: 'Optional e-mail address; it can be used to log in.' },
      admin: { type: 'boolean', description: 'Make the user an administrator of the tenant.' },
      'platform-admin': { type: 'boolean', description: 'Also let the user administer all tenants (implies --admin).' },
    },
    check(args) {
      checkNewUser(newUser(args));
    },
    async run(deps, args) {
      return { ...(await createUser(deps, newUser(args))) };
    },
    describe(user) {
      return [
        `Created user "${user.username}".`,
        ...fields([
          ['id', user.id],
          ['tenant', user.tenantId],
          ['username', user.username],
          ['email', user.email],
          ['roles', user.roles],
          ['status', user.status],
        ]),
      ];
    },
  },
  {
    name: 'users list',
    summary: "List a tenant's users with their ids (usr_…) and roles; never a password hash.",
    options: {
      tenant: {
        type: 'string',
        required: true,
        value: '<tenantId>',
        description: 'The tenant whose users to list (ten_…; see "tenants list").',
      },
    },
    async run(deps, args) {
      return { data: await tenantUsers(deps, str(args, 'tenant')!) }; // the shape of GET …/tenants/{id}/users
    },
    describe(result) {
      const users = result.data as User[];
      if (users.length === 0)
        return [
          'The tenant has no users yet. Create one with: gateway users create --tenant <tenantId> --username <name> --password-stdin',
        ];
      return table(
        ['ID', 'USERNAME', 'EMAIL', 'ROLES', 'STATUS', '2FA', 'CREATED'],
        users.map((u) => [
          u.id,
          u.username,
          u.email,
          u.roles.join(','),
          u.status,
          u.twoFactorEnabled ? 'on' : 'off',
          timestamp(u.createdAt),
        ]),
      );
    },
  },
];
