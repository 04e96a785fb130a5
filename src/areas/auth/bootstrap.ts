// First start on an empty database: the first tenant and its administrator come
// from GATEWAY_TENANT / GATEWAY_ADMIN_USERNAME / GATEWAY_ADMIN_PASSWORD (and the
// optional GATEWAY_ADMIN_EMAIL). Once any tenant exists this never runs again, so
// a later start with other values (or none) changes nothing.
import type { Config } from '../../platform/config.js';
import { ConfigError } from '../../platform/config.js';
import type { Database } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import type { Tenant } from './tenants/schemas.js';
import { createTenant, type TenantDeps } from './tenants/service.js';
import { createUser } from './users/service.js';
import type { User } from './users/schemas.js';

export type BootstrapResult =
  /** The database was empty and the variables created the first tenant and admin. */
  | { outcome: 'created'; tenant: Tenant; admin: User }
  /** Tenants exist already; `ignoredVariables` lists bootstrap variables that were set anyway. */
  | { outcome: 'existing'; tenants: number; ignoredVariables: string[] }
  /** No tenant and no bootstrap variables: the operator creates one with the CLI. */
  | { outcome: 'empty' };

const VARIABLES = {
  tenant: 'GATEWAY_TENANT',
  adminUsername: 'GATEWAY_ADMIN_USERNAME',
  adminPassword: 'GATEWAY_ADMIN_PASSWORD',
  adminEmail: 'GATEWAY_ADMIN_EMAIL',
} as const;
const REQUIRED = ['tenant', 'adminUsername', 'adminPassword'] as const;
// createUser names fields; at boot the operator needs the variable instead.
const FIELD_VARIABLE: Record<string, string> = {
  name: VARIABLES.tenant,
  username: VARIABLES.adminUsername,
  password: VARIABLES.adminPassword,
  email: VARIABLES.adminEmail,
};
// One starter at a time: replicas sharing a PostgreSQL database may start together.
const LOCK_ID = 7_242_002;

/** The first tenant is created with its settings' defaults, which are another area's (TenantDeps). */
export interface BootstrapDeps {
  db: Database;
  tenantSettings: TenantDeps['tenantSettings'];
}

export async function bootstrap(deps: BootstrapDeps, settings: Config['bootstrap']): Promise<BootstrapResult> {
  const given = (Object.keys(VARIABLES) as (keyof typeof VARIABLES)[]).filter((k) => settings[k] !== undefined);
  return deps.db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    const [{ n }] = (await q.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants')) as [{ n: number }];
    if (n > 0) return { outcome: 'existing', tenants: n, ignoredVariables: given.map((k) => VARIABLES[k]) };
    if (given.length === 0) return { outcome: 'empty' };

    // Some variables but not all: a half-configured first start is a mistake, not a default.
    const missing = REQUIRED.find((k) => settings[k] === undefined);
    if (missing) {
      const set = given.map((k) => VARIABLES[k]).join(', ');
      throw new ConfigError(VARIABLES[missing], `is required to create the first tenant (${set} ${given.length === 1 ? 'is' : 'are'} set)`);
    }
    try {
      const tenant = await createTenant({ db: q, tenantSettings: deps.tenantSettings }, settings.tenant!);
      const admin = await createUser(
        { db: q },
        {
          tenantId: tenant.id,
          username: settings.adminUsername!,
          password: settings.adminPassword!,
          ...(settings.adminEmail !== undefined ? { email: settings.adminEmail } : {}),
          roles: ['platform_admin', 'admin'],
        },
      );
      return { outcome: 'created', tenant, admin };
    } catch (error) {
      throw asConfigError(error);
    }
  });
}

function asConfigError(error: unknown): unknown {
  if (!(error instanceof AppError) || error.code !== 'VALIDATION_FAILED') return error;
  const field = error.extra.errors?.[0];
  const variable = field && FIELD_VARIABLE[field.field];
  return variable ? new ConfigError(variable, field.message) : error;
}
