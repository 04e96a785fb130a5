// What the edge asks the auth area: turn a presented credential into a principal.
import type { Principal } from '../../platform/identity.js';
import type { ApiKeyValidator } from './api-keys/validator.js';
import type { AccessTokens } from './sessions/access-tokens.js';
import type { AccountStates } from './users/account-state.js';
import type { ScimTokenValidator } from './scim-tokens/validator.js';

export interface CredentialResolver {
  resolveApiKey(key: string): Promise<Principal | undefined>;
  resolveAccessToken(token: string): Promise<Principal | undefined>;
  /** A tenant's SCIM token: asked on the SCIM routes only, where nothing else is accepted. */
  resolveScimToken(token: string): Promise<Principal | undefined>;
}

export function credentialResolver(
  apiKeys: ApiKeyValidator,
  accessTokens: AccessTokens,
  accounts: AccountStates,
  scimTokens: ScimTokenValidator,
): CredentialResolver {
  return {
    resolveApiKey: (key) => apiKeys.resolve(key),
    resolveScimToken: (token) => scimTokens.resolve(token),
    async resolveAccessToken(token) {
      const claims = await accessTokens.verify(token);
      if (!claims) return undefined;
      const state = await accounts.get(claims.userId);
      if (!state?.active || state.tenantId !== claims.tenantId) return undefined;
      // Issued before the user's credentials were last ended (a SCIM deactivation): refused
      // for good, also once the account is active again: reactivation needs a fresh sign-in.
      if ((claims.sessionEpoch ?? 0) !== state.sessionEpoch) return undefined;
      return {
        tenantId: state.tenantId,
        kind: 'user',
        subject: state.userId,
        roles: state.roles,
        scopes: [],
        ...(claims.sessionId ? { sessionId: claims.sessionId } : {}),
      };
    },
  };
}
