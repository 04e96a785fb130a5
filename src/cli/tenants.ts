// `gateway tenants …`
import { createTenant } from '../areas/auth/tenants/service.js';
import { validation } from '../platform/errors.js';
import { fields, str, type CommandSpec } from './command-spec.js';

const NAME_MAX = 200; // as POST /api/auth/tenants accepts

export const tenantCommands: CommandSpec[] = [
  {
    name: 'tenants create',
    summary: 'Create a tenant.',
    options: { name: { type: 'string', required: true, value: '<name>', description: 'Tenant name (unique, up to 200 characters).' } },
    check(args) {
      if (str(args, 'name')!.length > NAME_MAX) throw validation('--name', `must be at most ${NAME_MAX} characters`);
    },
    async run({ db }, args) {
      return { ...(await createTenant(db, str(args, 'name')!)) };
    },
    describe(tenant) {
      return [
        `Created tenant "${tenant.name}".`,
        ...fields([['id', tenant.id], ['name', tenant.name], ['status', tenant.status], ['created', tenant.createdAt]]),
      ];
    },
  },
];
