// What the gateway adds to Fastify's request and route config.
import type { Principal } from '../platform/identity.js';

/**
 * Who may call a route: every route declares one (`config: { access: … }`), and the
 * gateway refuses to start with a route that does not. The edge reads it for one thing
 * only: a `public` route needs no credential, any other answers 401 without a valid
 * one. The rest is a description of what the route's service enforces (through
 * platform/authorization.ts); test/gateway/route-security.test.ts checks every route
 * against its declaration, so the two cannot drift apart unnoticed.
 *
 * - `public`: no credential needed (sign-in, health, removed endpoints).
 * - `signedIn`: a signed-in person's access token, of any role; an API key gets 403.
 * - `tenant`: any credential of a tenant (an API key, or any user's token), acting on
 *   that tenant's own data; another tenant's ids are 404.
 * - `tenantEditor`: a tenant admin's token or an API key; a member gets 403; another
 *   tenant's ids are 404.
 * - `tenantAdmin`: a tenant admin's token, or a platform admin's; members and API keys
 *   get 403, and another tenant's admin gets 404 for this tenant's ids.
 * - `platformAdmin`: a platform admin's token only; everyone else gets 403.
 * - `personal`: a signed-in person, on their own records only (the persisted chat's
 *   conversations): another person's ids are 404 even inside the tenant, a tenant admin's
 *   included; an API key is refused (403; `POST /chat` answers 500, spec rule 3).
 * - `owner`: any credential of a tenant, on the records its owner made (threads,
 *   assistants, runs; llm/history/owner.ts): a person's are theirs alone, the tenant's
 *   API keys share theirs; anyone else's ids are 404.
 * - `scim`: a tenant's SCIM token (areas/auth/scim/), acting on that tenant's
 *   provisioned users and groups; another tenant's ids are 404. Nothing else is a SCIM
 *   token: an API key or an access token gets 401 here, and a SCIM token gets 401 on
 *   every other route. Its errors are SCIM's error schema, not problem+json.
 */
export const ROUTE_ACCESS = [
  'public',
  'signedIn',
  'tenant',
  'tenantEditor',
  'tenantAdmin',
  'platformAdmin',
  'personal',
  'owner',
  'scim',
] as const;
export type RouteAccess = (typeof ROUTE_ACCESS)[number];

/** One registered route, as the route table lists it. */
export interface RouteSummary {
  method: string;
  url: string;
  access: RouteAccess;
  /** Left out of the API document (`schema.hide`): the document itself, the docs UI and the web console. */
  hidden: boolean;
  /** The route's request schemas, as registered (undefined where the route has none). */
  schema: { body?: unknown; querystring?: unknown; params?: unknown };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on the gateway, in registration order. */
    routeTable: RouteSummary[];
  }
  interface FastifyContextConfig {
    /** Who may call the route (see RouteAccess). Optional to the type only: the gateway will not start with a route that lacks it (app.ts). */
    access?: RouteAccess;
    /**
     * The form of a route that also takes `multipart/form-data` (read by the route, not
     * validated by Fastify): the API document lists it beside the JSON body.
     */
    multipartForm?: unknown;
  }
  interface FastifyRequest {
    /** Minted by the edge after it resolved the credential; the services trust only this. */
    internalToken: string | null;
    /** Set by the service-side guard from the verified internal token. */
    principal: Principal | null;
  }
}
