// Whose a conversation, thread, assistant or run is. A person's records are theirs
// alone, even inside one tenant (a tenant admin does not read members' history through
// the API); what the tenant's API keys made belongs to all of the tenant's keys (or all
// keys of one customer), so that rotating a key loses nothing. Every query of the
// history store filters by tenant and owner; a record of another owner is a 404.
import type { Principal } from '../../../platform/identity.js';

export function ownerOf(principal: Principal): string {
  if (principal.kind === 'user') return principal.subject;
  return principal.customerId ? `keys:${principal.customerId}` : 'keys';
}
