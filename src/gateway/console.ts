// The web console: the single-page app `npm run build` writes to dist/console (index.html,
// hashed files in assets/, a .br and .gz beside each text file), served at `/` from the
// same origin as the API, so the refresh cookie (Path=/api/auth) reaches it and no CORS
// is involved. GATEWAY_CONSOLE=off serves none of it.
//
// One route per built file, listed when the gateway starts (what @fastify/static's
// `wildcard: false` does, but declared public and hidden from the API document like
// every other route): a request can only ever name a file that was in the directory,
// so no path (`..`, encoded or not) reaches a file outside it. @fastify/static sends
// the file, choosing its .br or .gz sibling by Accept-Encoding. A new build is picked
// up at the next start.
//
// Any other path a browser navigates to (a GET asking for text/html) is a client-side
// route: the not-found handler answers it with index.html (consoleFallback below),
// except under the API and the gateway's own pages, whose unknown paths stay JSON 404s.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../platform/errors.js';

export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const INDEX = 'index.html';
const NO_STORE = 'no-store';
// Hashed names (name-[hash].js): a changed file is a new name, so it may be kept for good.
const IMMUTABLE = 'public, max-age=31536000, immutable';
// Unhashed files beside index.html (favicon, robots.txt): kept a little, then asked for again.
const SHORT = 'public, max-age=3600';
const PRECOMPRESSED = /\.(?:br|gz)$/;

// The API and the gateway's own pages: never a console route, so their unknown paths
// keep the JSON problem 404 (and a console build can never shadow one of them).
// Repeated slashes and any casing, as the router itself accepts them.
const GATEWAY_PATHS = /^\/+(?:api|health|metrics|docs|openapi\.json)(?:[/?#]|$)/i;

export interface ConsoleOptions {
  enabled: boolean;
  dir: string;
}

/** Answers a not-found request when it is a browser's navigation to a console page; false when it is not one. */
export type NotFoundFallback = (request: FastifyRequest, reply: FastifyReply) => boolean;

export interface ConsoleSite {
  /** For the not-found handler (error-handler.ts). */
  fallback: NotFoundFallback;
  /** Registers the console's routes (and @fastify/static's sendFile on replies). */
  register(app: FastifyInstance): Promise<void>;
}

/** The console as configured, or undefined when GATEWAY_CONSOLE=off. Logs one line when it is not built. */
export function consoleSite(options: ConsoleOptions, log: FastifyBaseLogger): ConsoleSite | undefined {
  if (!options.enabled) return undefined;
  const dir = options.dir;
  if (!existsSync(path.join(dir, INDEX))) {
    log.warn(
      { consoleDir: dir },
      `the web console is not built (no ${INDEX} in ${dir}): "/" answers 404 until "npm run build" is run and the gateway restarted`,
    );
    return notBuilt();
  }
  const files = builtFiles(dir);
  return {
    fallback(request, reply) {
      if (!isNavigation(request)) return false;
      sendConsoleFile(request, reply.code(200), INDEX);
      return true;
    },
    async register(app) {
      // At the root, so the not-found handler's replies have sendFile too. Cache-Control is ours (below).
      await app.register(fastifyStatic, { root: dir, serve: false, preCompressed: true, cacheControl: false });
      await app.register(async (site) => {
        site.get('/', routeOptions, (request, reply) => sendConsoleFile(request, reply, INDEX));
        for (const file of files) site.get(`/${file}`, routeOptions, (request, reply) => sendConsoleFile(request, reply, file));
      });
    },
  };
}

// Public: the console is what signs people in. Hidden: it is not part of the API.
const routeOptions = { config: { access: 'public' as const }, schema: { hide: true } };

const NOT_BUILT =
  'The web console is not built: run "npm run build" in the gateway\'s folder and restart it (GATEWAY_CONSOLE=off serves the API alone).';

function notBuilt(): ConsoleSite {
  return {
    fallback(request) {
      if (!isNavigation(request)) return false;
      throw new AppError('NOT_FOUND', NOT_BUILT);
    },
    async register(app) {
      app.get('/', routeOptions, async () => {
        throw new AppError('NOT_FOUND', NOT_BUILT);
      });
    },
  };
}

/** A browser opening a page: GET or HEAD, asking for HTML, outside the API and the gateway's own pages. */
function isNavigation(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (!/text\/html/i.test(request.headers.accept ?? '')) return false;
  return !GATEWAY_PATHS.test(request.url);
}

function sendConsoleFile(request: FastifyRequest, reply: FastifyReply, file: string): FastifyReply {
  reply.headers({
    'cache-control': file === INDEX ? NO_STORE : file.startsWith('assets/') ? IMMUTABLE : SHORT,
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'x-frame-options': 'DENY',
  });
  // Over TLS only (directly, or through a trusted proxy's X-Forwarded-Proto): browsers ignore it over HTTP.
  if (request.protocol === 'https') reply.header('strict-transport-security', 'max-age=31536000');
  return reply.sendFile(file);
}

/**
 * Every regular file of the build, as URL paths relative to it: not the .br/.gz siblings
 * (chosen by Accept-Encoding instead), not dotfiles or symbolic links, not a name the
 * router would read as a parameter or wildcard, and nothing under the gateway's own paths.
 */
function builtFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || PRECOMPRESSED.test(entry.name)) continue;
    const relative = path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (relative.split('/').some((segment) => segment.startsWith('.')) || /[:*]/.test(relative)) continue;
    if (GATEWAY_PATHS.test(`/${relative}`)) continue;
    files.push(relative);
  }
  return files.sort();
}
