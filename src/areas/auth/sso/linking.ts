// Who an SSO sign-in is, in the connection's tenant and nowhere else. The identity is
// (tenant, issuer, sub), never the e-mail:
// 1. a known identity is its user, whatever the IdP says the address is now;
// 2. else a SCIM-provisioned user whose externalId is the connection's subjectClaim;
// 3. else an existing account of the tenant, only when the IdP says email_verified, the
//    domain is one of the connection's allowedEmailDomains, and the account's own
//    address was verified;
// 4. else, with jit on, a new user; with jit off the sign-in is refused.
// An account that holds an identity from the issuer already is never linked to another.
//
// JIT users and the platform-wide uniqueness of usernames and addresses (0001): a JIT
// user's username is the address's local part (or "user") plus a random suffix, so it
// never collides with, nor says anything about, another tenant's users; the IdP's
// address is stored only when the IdP verified it and no account anywhere has it yet,
// else the user has none. Nothing in the answer tells which case it was.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../../platform/db/database.js';
import { newId } from '../../../platform/ids.js';
import type { RoleName } from '../../../platform/identity.js';
import { hashPassword } from '../../../platform/passwords.js';
import { userRepository, type UserRow } from '../users/repository.js';
import { roleFromMapping } from './connections.js';
import type { SsoDeps } from './deps.js';
import { identityRepository, ssoUserRepository, type ConnectionRow } from './repository.js';

/** What the ID token says of the person, read once (sign-in.ts). */
export interface IdpPerson {
  issuer: string;
  subject: string;
  /** Present only when it is a string holding an @. */
  email: string | undefined;
  /** True only for the boolean true: a missing claim is unverified (Entra ID leaves it out). */
  emailVerified: boolean;
  groups: string[];
  /** The value of the connection's subjectClaim (sub, oid…), for SCIM-provisioned users. */
  subjectClaimValue: string | undefined;
}

export class SignInRefused extends Error {
  constructor(
    /** What the browser is told: the console shows a message for it. */
    readonly reason: 'transaction' | 'idp' | 'unavailable' | 'not_linked' | 'account_disabled' | 'too_many_attempts',
    /** For the log line only (never a code, a token or a state). */
    readonly why: string,
  ) {
    super(why);
  }
}

/** The tenant's SCIM-provisioned user whose externalId is the connection's subject claim's value (Entra ID's `oid`, Okta's id). */
export function findProvisionedUser(q: Queryable, tenantId: string, subjectValue: string): Promise<UserRow | undefined> {
  return ssoUserRepository.provisionedByExternalId(q, tenantId, subjectValue);
}

type Deps = Pick<SsoDeps, 'db'>;

/** The user the person signs in as, creating one (jit) where the rules say so; throws SignInRefused otherwise. */
export async function userForPerson(deps: Deps, connection: ConnectionRow, person: IdpPerson): Promise<UserRow> {
  const tenantId = connection.tenant_id;
  const known = await identityRepository.find(deps.db, tenantId, person.issuer, person.subject);
  if (known) {
    await identityRepository.touch(deps.db, {
      tenant_id: tenantId,
      issuer: person.issuer,
      subject: person.subject,
      email: person.email ?? null,
      connection_id: connection.id,
    });
    const user = await userRepository.getInTenant(deps.db, tenantId, known.user_id);
    if (!user) throw new SignInRefused('not_linked', 'the identity names a user that is not in the tenant');
    return user;
  }

  const candidate = await linkCandidate(deps.db, connection, person);
  if (candidate) {
    if (await link(deps.db, connection, person, candidate)) return candidate;
    throw new SignInRefused('not_linked', 'the identity was linked by another sign-in meanwhile; sign in again');
  }
  if (!connection.jit) throw new SignInRefused('not_linked', 'no account is linked to this identity and jit is off');
  return createJitUser(deps, connection, person);
}

/** An existing account the identity may be linked to: a SCIM-provisioned one, else by the verified e-mail rule. */
async function linkCandidate(q: Queryable, connection: ConnectionRow, person: IdpPerson): Promise<UserRow | undefined> {
  const eligible = async (user: UserRow | undefined) =>
    user && user.tenant_id === connection.tenant_id && !(await identityRepository.userHasIssuer(q, user.id, person.issuer))
      ? user
      : undefined;
  if (person.subjectClaimValue !== undefined) {
    const provisioned = await eligible(await findProvisionedUser(q, connection.tenant_id, person.subjectClaimValue));
    if (provisioned) return provisioned;
  }
  if (!person.email || !person.emailVerified) return undefined;
  const domain = person.email.slice(person.email.lastIndexOf('@') + 1).toLowerCase();
  if (!connection.allowed_email_domains.includes(domain)) return undefined;
  const local = await ssoUserRepository.byEmailInTenant(q, connection.tenant_id, person.email);
  return local?.email_verified ? eligible(local) : undefined;
}

function link(q: Queryable, connection: ConnectionRow, person: IdpPerson, user: UserRow): Promise<boolean> {
  return identityRepository.insert(q, {
    tenant_id: connection.tenant_id,
    issuer: person.issuer,
    subject: person.subject,
    user_id: user.id,
    connection_id: connection.id,
    email: person.email ?? null,
  });
}

async function createJitUser(deps: Deps, connection: ConnectionRow, person: IdpPerson): Promise<UserRow> {
  // A password nobody knows: the account signs in through its IdP (and, with a password
  // an admin sets later, with it too). A real hash, so a login attempt takes as long as any.
  const passwordHash = await hashPassword(randomBytes(32).toString('base64url'));
  const email = person.email && person.emailVerified && !(await ssoUserRepository.emailInUse(deps.db, person.email)) ? person.email : null;
  const roles: RoleName[] = [roleFromMapping(connection.role_mapping, person.groups) ?? 'member'];
  const created = await deps.db.tx(async (q) => {
    const user = await ssoUserRepository.insert(q, {
      id: newId('user'),
      tenant_id: connection.tenant_id,
      username: jitUsername(person.email),
      email,
      email_verified: email !== null,
      password_hash: passwordHash,
      roles,
    });
    // A username or address taken meanwhile, or the identity linked by a racing sign-in: nothing is kept.
    if (!user || !(await link(q, connection, person, user))) return undefined;
    return user;
  });
  if (!created) throw new SignInRefused('not_linked', 'the new user could not be created (a concurrent sign-in); sign in again');
  return created;
}

/** `alice.k3m9q2p7x1`: the address's local part, cut to the username rules, and 10 random characters. */
export function jitUsername(email: string | undefined): string {
  const local = (email?.slice(0, email.lastIndexOf('@')) ?? '')
    .replace(/[^A-Za-z0-9._-]/g, '')
    .replace(/^[._-]+/, '')
    .slice(0, 40);
  const suffix = [...randomBytes(10)].map((byte) => '0123456789abcdefghjkmnpqrstvwxyz'[byte & 31]).join('');
  return `${local || 'user'}.${suffix}`;
}

/**
 * Roles follow the groups at every sign-in when the connection maps any (promote and
 * demote): admin when a group maps to admin, else member. platform_admin is never given
 * and never taken by SSO. Without a mapping the roles are left as they are.
 */
export function rolesAfterSignIn(connection: ConnectionRow, user: UserRow, groups: string[]): RoleName[] | undefined {
  if (Object.keys(connection.role_mapping).length === 0) return undefined;
  const mapped: RoleName = roleFromMapping(connection.role_mapping, groups) ?? 'member';
  const roles: RoleName[] = user.roles.includes('platform_admin') ? [mapped, 'platform_admin'] : [mapped];
  const same = roles.length === user.roles.length && roles.every((role) => user.roles.includes(role));
  return same ? undefined : roles;
}
