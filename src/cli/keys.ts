// `gateway keys …`
import { issueApiKey } from '../areas/auth/api-keys/service.js';
import { validation } from '../platform/errors.js';
import { fields, str, type CommandArgs, type CommandSpec } from './command-spec.js';

const NAME_MAX = 200;
const SCOPE = /^[A-Za-z0-9._:*-]{1,100}$/;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

const scopesOf = (args: CommandArgs) => (str(args, 'scopes') ?? '').split(',').map((s) => s.trim()).filter(Boolean);

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
    check(args) {
      if (str(args, 'name')!.length > NAME_MAX) throw validation('--name', `must be at most ${NAME_MAX} characters`);
      const badScope = scopesOf(args).find((s) => !SCOPE.test(s));
      if (badScope !== undefined) throw validation('--scopes', `"${badScope}" is not a scope: use letters, digits and . _ : * -`);
      const expiresAt = str(args, 'expires-at');
      if (expiresAt !== undefined && (!ISO_8601.test(expiresAt) || Number.isNaN(Date.parse(expiresAt)))) {
        throw validation('--expires-at', 'must be an ISO 8601 timestamp such as 2030-01-01T00:00:00Z');
      }
    },
    async run(deps, args) {
      const tenantId = str(args, 'tenant')!;
      const expiresAt = str(args, 'expires-at');
      const customerId = str(args, 'customer');
      const created = await issueApiKey(
        deps,
        tenantId,
        { name: str(args, 'name')!, scopes: scopesOf(args), ...(expiresAt !== undefined ? { expiresAt } : {}), ...(customerId !== undefined ? { customerId } : {}) },
        null, // created by the operator, not by a user of the tenant
      );
      return { ...created, tenantId };
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
