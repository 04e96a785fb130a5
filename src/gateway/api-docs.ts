// The API as an operator reads it: `GET /openapi.json`, an OpenAPI 3.1 document
// generated from the routes' own TypeBox schemas and access declarations, and the
// interactive docs at /docs (GATEWAY_API_DOCS). @fastify/swagger only collects the
// routes as they are registered (an onRoute hook); the document is built once, when
// the app is ready (before it listens), as JSON and YAML text, and every request for
// it is answered from those: nothing is added to any other request's path.
//
// Built on the first request instead (swagger's default), the first GET /docs/yaml held
// the event loop for 0.7 s, and anyone could trigger it. Built at start, it costs ~0.1 s
// of the start (the object; the YAML, written by plain-yaml.ts, ~25 ms). Not at build
// time: the document follows the configuration (/metrics on the main listener or not).
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { VERSION } from '../context.js';
import type { RouteAccess } from './fastify-types.js';
import { toPlainYaml } from './plain-yaml.js';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PREFIX = '/docs';
const DOCUMENTED_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'trace']);

/** The credentials each access level lets through the edge (authenticate.ts reads them the same way). */
type Requirement = Record<string, string[]>;
const API_KEY: Requirement[] = [{ apiKey: [] }, { apiKeyBearer: [] }];
const ACCESS_TOKEN: Requirement[] = [{ accessToken: [] }];
const SECURITY: Record<RouteAccess, Requirement[]> = {
  // An empty list: no credential needed (OpenAPI's way to override a default).
  public: [],
  signedIn: ACCESS_TOKEN,
  tenant: [...API_KEY, ...ACCESS_TOKEN],
  tenantEditor: [...API_KEY, ...ACCESS_TOKEN],
  tenantAdmin: ACCESS_TOKEN,
  platformAdmin: ACCESS_TOKEN,
  personal: ACCESS_TOKEN,
  owner: [...API_KEY, ...ACCESS_TOKEN],
  scim: [{ scimToken: [] }],
};

/** What each level means, in the words an API reader needs (fastify-types.ts has the full rule). */
const ACCESS_WORDS: Record<RouteAccess, string> = {
  public: 'No credential needed.',
  signedIn: "A signed-in person's access token, of any role; an API key gets 403.",
  tenant: "Any credential of the tenant (an API key or a user's access token); another tenant's ids are 404.",
  tenantEditor: "A tenant admin's access token or an API key; a member gets 403; another tenant's ids are 404.",
  tenantAdmin: "A tenant admin's (or platform admin's) access token; members and API keys get 403.",
  platformAdmin: "A platform admin's access token only; everyone else gets 403.",
  personal: "A signed-in person, on their own records only; another person's ids are 404; an API key gets 403.",
  owner:
    "Any credential of the tenant, on the records its owner made (a person's are theirs; the tenant's API keys share theirs); anyone else's ids are 404.",
  scim: "A tenant's SCIM token (`scim_…`) as a bearer token, nothing else; another tenant's ids are 404. Errors follow SCIM's error schema (RFC 7644 §3.12).",
};

/**
 * Routes of the docs UI (@fastify/swagger-ui and the static files it serves) come from a
 * package and declare no access: they are public. An onRoute hook that must run before
 * the gateway's own, which refuses a route without a declaration (app.ts).
 */
export function declareDocsRoutesPublic(route: RouteOptions & { prefix: string }): void {
  const { prefix } = route;
  if (route.config?.access !== undefined || !(prefix === DOCS_PREFIX || prefix.startsWith(`${DOCS_PREFIX}/`))) return;
  route.config = { ...route.config, access: 'public' };
}

/** Collects every route registered after it: call before the areas are registered. */
export async function collectApiSchemas(app: FastifyInstance): Promise<ApiDocuments> {
  await app.register(swagger, {
    // Not `swagger`: that name is ours (below), answering from the texts built at ready.
    decorator: BUILD_DOCUMENT,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Gateway',
        version: VERSION,
        description:
          'One secure address in front of your language models. Every operation says who may call it: `security` lists the credentials the edge accepts, `x-gateway-access` the access level the service enforces. Errors are `application/problem+json`.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (`rdk_…`) in the X-API-Key header.' },
          apiKeyBearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'rdk_…',
            description: 'An API key sent as `Authorization: Bearer rdk_…` (what OpenAI clients send).',
          },
          accessToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: "A person's access token from `POST /api/auth/login` (or refresh), as `Authorization: Bearer …`.",
          },
          scimToken: {
            type: 'http',
            scheme: 'bearer',
            description: "A tenant's SCIM token (`scim_…`, from `POST /api/auth/tenants/{tenantId}/scim-tokens`): the SCIM routes only.",
          },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      // Auto-added HEAD routes are not listed (swagger's default); the docs' own routes are hidden.
      const access = route.config?.access as RouteAccess | undefined;
      const hidden = isDocsRoute(url) || access === undefined;
      const form = route.config?.multipartForm;
      const described = {
        ...documentSchema(schema ?? {}),
        // A route that also takes files: both forms of its body, so Swagger UI offers a file picker.
        ...(form && schema?.body
          ? {
              body: {
                content: {
                  'application/json': { schema: documentSchema(schema.body) },
                  'multipart/form-data': { schema: documentSchema(form) },
                },
              },
            }
          : {}),
        ...(hidden ? { hide: true } : {}),
        tags: [areaOf(url)],
        description: [
          (schema as { description?: string } | undefined)?.description,
          `Access: \`${access}\`. ${ACCESS_WORDS[access ?? 'public']}`,
        ]
          .filter(Boolean)
          .join('\n\n'),
        security: SECURITY[access ?? 'public'],
        'x-gateway-access': access,
      };
      return { schema: described as never, url };
    },
    // HEAD (which Fastify adds to each GET) and OPTIONS (CORS preflights) are left out, and
    // so are the methods OpenAPI has no field for (a route for all methods, `app.all`,
    // also answers WebDAV's PROPFIND and the like).
    transformObject: (documentObject) => {
      const { openapiObject } = documentObject as { openapiObject: { paths?: Record<string, Record<string, unknown>> } };
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const method of Object.keys(item)) if (!DOCUMENTED_METHODS.has(method)) delete item[method];
      }
      return openapiObject as never;
    },
  });

  const built = { object: undefined as unknown, json: '', yaml: '' };
  // Once every route is registered, before the server listens.
  app.addHook('onReady', async () => {
    const build = (app as unknown as Record<string, () => unknown>)[BUILD_DOCUMENT]!;
    built.object = build();
    built.json = JSON.stringify(built.object);
    built.yaml = toPlainYaml(built.object);
  });
  // What @fastify/swagger-ui calls for /docs/json and /docs/yaml, and /openapi.json below.
  app.decorate('swagger', ((options?: { yaml?: boolean }) => {
    if (built.object === undefined) throw new Error('The API document is built when the app is ready.');
    return options?.yaml ? built.yaml : built.object;
  }) as FastifyInstance['swagger']);
  return { json: () => built.json };
}

/** The name of @fastify/swagger's builder on the app (tests check that no request calls it). */
export const BUILD_DOCUMENT = 'buildApiDocument';

/** The API document as text, built when the app is ready. */
export interface ApiDocuments {
  json(): string;
}

/** `GET /openapi.json`, and the docs UI at /docs when `docs` is on. */
export async function apiDocsRoutes(app: FastifyInstance, { docs, documents }: { docs: boolean; documents: ApiDocuments }): Promise<void> {
  app.get(OPENAPI_PATH, { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8');
    return documents.json();
  });
  if (!docs) return;
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    // The UI loads the same document as /openapi.json (swagger-ui serves it at /docs/json).
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
}

function isDocsRoute(url: string): boolean {
  return url === OPENAPI_PATH || url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`);
}

function areaOf(url: string): string {
  const match = /^\/api\/(auth|os|llm)\//.exec(url);
  return match ? match[1]! : 'gateway';
}

// Literal values (`const`, `enum`, `default`, `examples`) are data, not schemas: left alone.
const LITERALS = new Set(['const', 'enum', 'default', 'examples']);

/**
 * A route schema as the document shows it. The text rules' `text` keyword (text-rules.ts)
 * is the gateway's own: it becomes the extension `x-gateway-text`, which documents the
 * rule without asking a reader's validator to know the keyword. Copies; the route's
 * schema objects are never changed.
 */
export function documentSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(documentSchema) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === 'text' && typeof value === 'string') copy['x-gateway-text'] = value;
    else copy[key] = LITERALS.has(key) ? value : documentSchema(value);
  }
  return copy as T;
}
