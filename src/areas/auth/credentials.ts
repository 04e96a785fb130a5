// What the edge asks the auth area: turn a presented credential into a principal.
import type { Principal } from '../../platform/identity.js';
import type { ApiKeyValidator } from './api-keys/validator.js';
import type { AccessTokens } from './sessions/access-tokens.js';
import type { AccountStates } from './users/account-state.js';

export interface CredentialResolver {
  resolveApiKey(key: string): Promise<Principal | undefined>;
  resolveAccessToken(token: string): Promise<Principal | undefined>;
}

export function credentialResolver(apiKeys: ApiKeyValidator, accessTokens: AccessTokens, accounts: AccountStates): CredentialResolver {
  return {
    resolveApiKey: (key) => apiKeys.resolve(key),
    async resolveAccessToken(token) {
      const claims = await accessTokens.verify(token);
      if (!claims) return undefined;
      const state = await accounts.get(claims.userId);
      if (!state?.active || state.tenantId !== claims.tenantId) return undefined;
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
