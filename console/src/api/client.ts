// The console's one way to call the API: same origin, the in-memory bearer, and on a
// 401 one refresh and one retry. Answers are typed by the server's own TypeBox schemas
// (api/types.ts); errors arrive as ApiError carrying the problem+json body.
import { ApiError, problemOf } from './problem.js';
import { accessToken, refresh } from './session.js';

export { ApiError };

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  query?: Query;
  /** Sent as JSON; a FormData is sent as multipart. */
  body?: unknown;
  signal?: AbortSignal;
}

export function urlOf(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/** The Authorization header for hand-made requests (uploads with progress, streams). */
export function authorization(): Record<string, string> {
  const bearer = accessToken();
  return bearer ? { authorization: `Bearer ${bearer}` } : {};
}

/** A fetch with the bearer that refreshes once on 401. The caller reads the body. */
export async function authorizedFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const send = () => fetch(path, { ...init, headers: { ...(init.headers as Record<string, string>), ...authorization() } });
  let response = await send();
  if (response.status === 401 && (await refresh())) response = await send();
  return response;
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const { method = 'GET', query, body, signal } = options;
  const isForm = body instanceof FormData;
  const init: RequestInit = { method, ...(signal ? { signal } : {}) };
  if (body !== undefined) {
    init.body = isForm ? body : JSON.stringify(body);
    if (!isForm) init.headers = { 'content-type': 'application/json' };
  }
  const response = await authorizedFetch(urlOf(path, query), init);
  if (!response.ok) throw await problemOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export const isApiError = (error: unknown, status?: number): error is ApiError =>
  error instanceof ApiError && (status === undefined || error.status === status);
