// What the gateway adds to Fastify's request and route config.
import type { Principal } from '../platform/identity.js';

/** `public`: no credential needed. `required` (the default): a valid credential or 401. */
export type RouteAuth = 'public' | 'required';

/** One registered route, as the route table lists it. */
export interface RouteSummary {
  method: string;
  url: string;
  auth: RouteAuth;
  /** The route's request schemas, as registered (undefined where the route has none). */
  schema: { body?: unknown; querystring?: unknown; params?: unknown };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on the gateway, in registration order. */
    routeTable: RouteSummary[];
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    /** Minted by the edge after it resolved the credential; the services trust only this. */
    internalToken: string | null;
    /** Set by the service-side guard from the verified internal token. */
    principal: Principal | null;
  }
}
