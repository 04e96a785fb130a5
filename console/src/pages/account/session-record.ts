// A session of GET /api/auth/sessions, as the server's schema defines it.
export type { SessionRecord } from '../../../../src/areas/auth/sessions/schemas.js';
