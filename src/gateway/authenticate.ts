// Credential → identity at the edge, then the internal token for the services.
// Missing, unknown, malformed, expired, revoked and deleted credentials all get
// the same 401, so a caller learns nothing about which keys exist.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CredentialResolver } from '../areas/auth/credentials.js';
import { unauthenticated } from '../platform/errors.js';
import { mintInternalToken } from '../platform/internal-token.js';
import { KEY_PREFIX } from '../areas/auth/api-keys/key-format.js';

type Credential = { kind: 'apiKey' | 'accessToken'; value: string };

export function readCredential(request: FastifyRequest): Credential | undefined {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim()) return { kind: 'apiKey', value: apiKey.trim() };
  const authorization = request.headers.authorization;
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return undefined;
  const value = match[1]!;
  return { kind: value.startsWith(KEY_PREFIX) ? 'apiKey' : 'accessToken', value };
}

export function registerAuthentication(app: FastifyInstance, resolver: CredentialResolver, internalTokenKey: Buffer): void {
  app.decorateRequest('internalToken', null);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    // Unmatched paths answer 404 whatever the credential; CORS preflights carry none.
    if (request.is404 || request.method === 'OPTIONS' || request.routeOptions.config.access === 'public') return;
    if (request.routeOptions.config.access === 'scim') {
      // Only a SCIM token, and only as a bearer token (RFC 7644 §2): an API key or an
      // access token is refused here like an unknown token.
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
      const principal = match ? await resolver.resolveScimToken(match[1]!) : undefined;
      if (!principal) throw unauthenticated();
      request.internalToken = mintInternalToken(internalTokenKey, principal, String(request.id));
      return;
    }
    const credential = readCredential(request);
    if (!credential) throw unauthenticated();
    const principal =
      credential.kind === 'apiKey' ? await resolver.resolveApiKey(credential.value) : await resolver.resolveAccessToken(credential.value);
    if (!principal) throw unauthenticated();
    request.internalToken = mintInternalToken(internalTokenKey, principal, String(request.id));
  });
}
