// `gateway keys …`
import { issueApiKey } from '../areas/auth/api-keys/service.js';
import { validation } from '../platform/errors.js';
import { fields, str, type CommandSpec } from './command-spec.js';

const NAME_MAX = 200;
const SCOPE = /^[A-Za-z0-9._:*-]{1,100}$/;

export const keyCommands: CommandSpec[] = [
  {
    name: 'keys create',
    summary: "Create an API key for a tenant; the key is shown once, only the keyed hash is stored.",
    options: {
      tenant: { type: 'string', required: true, value: '<tenantId>', description: 'The tenant the key belongs to (ten_…).' },
      name: { type: 'string', required: true, value: '<name>', description: 'A label for the key (up to 200 characters).' },
      scopes: { type: 'string', value: '<a,b,…>', description: 'Comma-separated scopes, stored and forwarded (not enforced).' },
      'expires-at': { type: 'string', value: '<ISO 8601>', description: 'When the key stops working, e.g. 2030-01-01T00:00:00Z.' },
      customer: { type: 'string', value: '<customerId>', description: 'The customer within the tenant the key is issued to.' },
    },
    async run(deps, args) {
      const name = str(args, 'name')!;
      if (name.length > NAME_MAX) throw validation('--name', `must be at most ${NAME_MAX} characters`);
      const scopes = (str(args, 'scopes') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      const badScope = scopes.find((s) => !SCOPE.test(s));
      if (badScope !== undefined) throw validation('--scopes', `"${badScope}" is not a scope: use letters, digits and . _ : * -`);
      const expiresAt = str(args, 'expires-at');
      if (expiresAt !== undefined && !/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(expiresAt)) {
        throw validation('--expires-at', 'must be an ISO 8601 timestamp such as 2030-01-01T00:00:00Z');
      }
      const customerId = str(args, 'customer');
      const created = await issueApiKey(
        deps,
        str(args, 'tenant')!,
        { name, scopes, ...(expiresAt !== undefined ? { expiresAt } : {}), ...(customerId !== undefined ? { customerId } : {}) },
        null, // created by the operator, not by a user of the tenant
      );
      return { ...created, tenantId: str(args, 'tenant')! };
    },
    describe(key) {
      return [
        `Created API key "${key.name}". Store it now: it is shown only this once.`,
        '',
        `  ${key.key}`,
        '',
        ...fields([['id', key.id], ['tenant', key.tenantId], ['masked', key.maskedKey], ['scopes', JSON.parse(String(key.scopes)) as string[]], ['expires', key.expiresAt], ['customer', key.customerId]]),
        'Use it as "X-API-Key: <key>" or "Authorization: Bearer <key>".',
      ];
    },
  },
];
