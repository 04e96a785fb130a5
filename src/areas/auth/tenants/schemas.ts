// Tenants on the wire: the tenant record, the create and change bodies, the path
// parameters. TypeBox schemas; the TypeScript types are derived from them.
//
// The record's `settings` and the PATCH fields that change them are not the
// tenants feature's: another area adds them, the way a better-auth plugin adds
// fields to a model (TenantSettingsFields). The composition root says whose they
// are (today the llm area's: default model, allowed models, stream compatibility),
// so nothing here imports that area.
import { Type, type Static, type TObject, type TProperties, type TSchema, type TUnknown } from '@fastify/type-provider-typebox';
import { Text, Timestamp } from '../../schemas.js';
import { LimitsInput, LimitsRecord } from '../../../platform/rate-limits/limits.js';

export const TENANT_NAME_MAX_LENGTH = 200;
const TenantName = Text(TENANT_NAME_MAX_LENGTH);
export const TenantStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);

/**
 * Settings another area keeps on the tenant record: stored in tenants.settings
 * (jsonb, merged key by key, so areas keep their keys apart), shown as the
 * record's `settings` object, changed through PATCH fields of their own.
 */
export interface TenantSettingsFields<Settings extends object = object, Patch extends object = object> {
  /** The schema of the record's `settings` object. */
  record: TSchema;
  /** The PATCH body fields that change the settings: an object whose properties are all optional. */
  patch: TObject;
  /** The settings from what tenants.settings holds (defaults for what it lacks). */
  read(stored: Record<string, unknown>): Settings;
  /** The settings after `patch` (the PATCH fields that were sent), checked as a whole: throws a 400 naming the field. */
  merge(current: Settings, patch: Patch): Settings;
}

/** The tenant record, with `settings` as the area that owns them describes them. */
export const tenantRecord = <Settings extends TSchema>(settings: Settings) =>
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    status: TenantStatus,
    settings,
    /** Rate limits and token budgets for every request of the tenant; {} when none. */
    limits: LimitsRecord,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  });
/** A tenant as this feature sees it: its `settings` belong to another area. */
export type Tenant = Static<ReturnType<typeof tenantRecord<TUnknown>>>;

export const NewTenantBody = Type.Object({ name: TenantName });

/** PATCH: name and status, and the settings fields of the area that owns them. */
export const tenantPatch = <SettingsFields extends TProperties>(settingsFields: SettingsFields) =>
  Type.Object({
    name: Type.Optional(TenantName),
    status: Type.Optional(TenantStatus),
    /** Platform admins only: replaces the tenant's limits (`{}` or null: none). */
    limits: Type.Optional(Type.Union([LimitsInput, Type.Null()])),
    ...settingsFields,
  });
/** What updateTenant reads of a PATCH body; the settings fields pass through to their owner. */
export type TenantPatch = Static<ReturnType<typeof tenantPatch<Record<never, never>>>> & Record<string, unknown>;

export const TenantParams = Type.Object({ tenantId: Type.String() });
