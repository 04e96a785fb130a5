// A session of GET /api/auth/sessions. Its schema (SessionRecord in
// src/areas/auth/sessions/schemas.ts) is being added on the lists branch and is not in
// this checkout yet; once it lands, this file becomes
//   export type { SessionRecord } from '../../../../src/areas/auth/sessions/schemas.js';
export interface SessionRecord {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  userAgent: string | null;
  address: string | null;
  current: boolean;
}
