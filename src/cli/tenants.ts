// `gateway tenants …`
import { TENANT_NAME_MAX_LENGTH as NAME_MAX, type Tenant } from '../areas/auth/tenants/schemas.js';
import { allTenants, createTenant } from '../areas/auth/tenants/service.js';
import { validation } from '../platform/errors.js';
import { fields, str, table, timestamp, type CommandSpec } from './command-spec.js';

export const tenantCommands: CommandSpec[] = [
  {
    name: 'tenants create',
    summary: 'Create a tenant.',
    options: { name: { type: 'string', required: true, value: '<name>', description: 'Tenant name (unique, up to 200 characters).' } },
    check(args) {
      if (str(args, 'name')!.length > NAME_MAX) throw validation('--name', `must be at most ${NAME_MAX} characters`);
    },
    async run(deps, args) {
      return { ...(await createTenant(deps, str(args, 'name')!)) };
    },
    describe(tenant) {
      return [
        `Created tenant "${tenant.name}".`,
        ...fields([
          ['id', tenant.id],
          ['name', tenant.name],
          ['status', tenant.status],
          ['created', tenant.createdAt],
        ]),
      ];
    },
  },
  {
    name: 'tenants list',
    summary: 'List the tenants with their ids (ten_…), oldest first.',
    options: {},
    async run(deps) {
      return { data: await allTenants(deps) }; // the shape of GET /api/auth/tenants
    },
    describe(result) {
      const tenants = result.data as Tenant[];
      if (tenants.length === 0) return ['No tenants yet. Create one with: gateway tenants create --name <name>'];
      return table(
        ['ID', 'NAME', 'STATUS', 'CREATED'],
        tenants.map((t) => [t.id, t.name, t.status, timestamp(t.createdAt)]),
      );
    },
  },
];
