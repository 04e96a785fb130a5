// `gateway keys …`
import { checkNewApiKey, issueApiKey, tenantApiKeys } from '../areas/auth/api-keys/service.js';
import type { ApiKeyRecord, NewApiKey } from '../areas/auth/api-keys/schemas.js';
import { fields, str, table, timestamp, type CommandArgs, type CommandSpec } from './command-spec.js';

// The service names fields (`expiresAt`); commands.ts maps them onto options (`--expires-at`).
function newKey(args: CommandArgs): NewApiKey {
  const expiresAt = str(args, 'expires-at');
  const customerId = str(args, 'customer');
  return {
    name: str(args, 'name')!,
    scopes: (str(args, 'scopes') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(customerId !== undefined ? { customerId } : {}),
  };
}

function scopesOf(stored: unknown): string[] | string {
  const scopes = JSON.parse(String(stored)) as string[];
  return scopes.length > 0 ? scopes : 'none';
}

export const keyCommands: CommandSpec[] = [
  {
    name: 'keys create',
    summary: 'Create an API key for a tenant; the key is shown once, only the keyed hash is stored.',
    options: {
      tenant: { type: 'string', required: true, value: '<tenantId>', description: 'The tenant the key belongs to (ten_…).' },
      name: { type: 'string', required: true, value: '<name>', description: 'A label for the key (up to 200 characters).' },
      scopes: { type: 'string', value: '<a,b,…>', description: 'Comma-separated scopes, stored and forwarded (not enforced).' },
      'expires-at': { type: 'string', value: '<ISO 8601>', description: 'When the key stops working, e.g. 2030-01-01T00:00:00Z.' },
      customer: { type: 'string', value: '<customerId>', description: 'The customer within the tenant the key is issued to.' },
    },
    check(args) {
      checkNewApiKey(newKey(args));
    },
    async run(deps, args) {
      const tenantId = str(args, 'tenant')!;
      const created = await issueApiKey(deps, tenantId, newKey(args), null); // created by the operator, not by a user of the tenant
      return { ...created, tenantId };
    },
    describe(key) {
      return [
        `Created API key "${key.name}". Store it now: it is shown only this once.`,
        '',
        `  ${key.key}`,
        '',
        ...fields([
          ['id', key.id],
          ['tenant', key.tenantId],
          ['masked', key.maskedKey],
          // A key made without --scopes has none (they are stored and forwarded, not enforced): say so, not an empty line.
          ['scopes', scopesOf(key.scopes)],
          ['expires', key.expiresAt],
          ['customer', key.customerId],
        ]),
        'Use it as "X-API-Key: <key>" or "Authorization: Bearer <key>".',
      ];
    },
  },
  {
    name: 'keys list',
    summary: "List a tenant's API keys, masked: a key is shown in full only when it is created.",
    options: {
      tenant: {
        type: 'string',
        required: true,
        value: '<tenantId>',
        description: 'The tenant whose keys to list (ten_…; see "tenants list").',
      },
    },
    async run(deps, args) {
      return { data: await tenantApiKeys(deps, str(args, 'tenant')!) }; // the shape of GET …/tenants/{id}/api-keys
    },
    describe(result) {
      const keys = result.data as ApiKeyRecord[];
      if (keys.length === 0)
        return ['The tenant has no API keys yet. Create one with: gateway keys create --tenant <tenantId> --name <name>'];
      return table(
        ['ID', 'NAME', 'KEY', 'STATUS', 'EXPIRES', 'LAST USED', 'CREATED'],
        keys.map((k) => [k.id, k.name, k.maskedKey, k.status, timestamp(k.expiresAt), timestamp(k.lastUsedAt), timestamp(k.createdAt)]),
      );
    },
  },
];
