// OpenTelemetry traces, off unless an OTLP endpoint is configured. Off costs nothing:
// this module imports no OpenTelemetry package itself (they are loaded by startTracing
// only), and the edge adds its request hook only when tracing runs (gateway/app.ts).
//
// The SDK reads the standard OTEL_* variables itself (endpoint, protocol, headers,
// sampler, service name, resource attributes, batch delays): they are the operator's
// interface to every OpenTelemetry setup, so they are not re-parsed in platform/config.ts.
//
// Started by bin/gateway.js in the process that serves, before the CLI and the server
// modules are loaded: the instrumentations must hook `node:http` and `pg` before the
// first import of either (undici reports through diagnostics_channel, so its order does
// not matter). A later start would trace requests without their database queries.
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type * as OtelApi from '@opentelemetry/api';

/** True when the environment asks for traces: an OTLP endpoint, and the SDK not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint) return false;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  // `none` among the exporters is the standard way to keep the SDK but export nothing.
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((e) => e.trim().toLowerCase());
  return !exporters.includes('none');
}

/** The span of the request being handled (the HTTP server span), as the edge marks it. */
export interface RequestSpan {
  setAttribute(name: string, value: string): void;
  /** The method and route template: instrumentation-http alone knows the method only. */
  updateName(name: string): void;
}

/**
 * A piece of work that has ended, put in the current trace as a span of its own (a child
 * of the active span: the request's). Recorded once it is over, with its own start and
 * duration, so the code doing the work needs no tracing calls inside it.
 */
export interface FinishedWork {
  name: string;
  startTime: Date;
  durationMs: number;
  /** Low-cardinality facts only: never request or result content. */
  attributes: Record<string, string | number>;
  /** Set when the work failed: the span's status is ERROR with this (a kind, not a message that could quote content). */
  error?: string;
}

/** instrumentation-http's own list (cloud signatures), and the names a credential goes by. */
const REDACTED_QUERY_PARAMS = [
  'sig',
  'Signature',
  'AWSAccessKeyId',
  'X-Goog-Signature',
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
  'key',
  'api_key',
  'api-key',
  'apikey',
  'apiKey',
  'token',
  'access_token',
  'password',
];

let sdk: NodeSDK | undefined;
let activeSpan: (() => RequestSpan | undefined) | undefined;
let finishedWork: ((work: FinishedWork) => void) | undefined;

/** Whether startTracing ran in this process. */
export function tracingActive(): boolean {
  return sdk !== undefined;
}

/**
 * The current request's span, read where a hook runs; undefined when tracing is off,
 * so that the edge registers no hook at all then (off costs nothing per request).
 */
export function requestSpans(): (() => RequestSpan | undefined) | undefined {
  return activeSpan;
}

/** Records finished work as a span (see FinishedWork); undefined when tracing is off, so callers skip it then. */
export function workSpans(): ((work: FinishedWork) => void) | undefined {
  return finishedWork;
}

/**
 * Points the gateway's span hooks at an OpenTelemetry API whose tracer provider is
 * registered: startTracing's NodeSDK, or a test's in-memory provider.
 */
export function traceWith(api: typeof OtelApi): void {
  const tracer = api.trace.getTracer('gateway');
  activeSpan = () => api.trace.getActiveSpan();
  finishedWork = (work) => {
    const start = work.startTime.getTime();
    const span = tracer.startSpan(work.name, { kind: api.SpanKind.INTERNAL, startTime: start, attributes: work.attributes });
    if (work.error !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: work.error });
    span.end(start + work.durationMs);
  };
}

/**
 * Registers the HTTP, undici and pg instrumentations and starts exporting spans over
 * OTLP as the OTEL_* variables say. Traces only: metrics are /metrics's job, and logs
 * stay on stdout, so the SDK's metric and log exporters stay off whatever the environment says.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (sdk) return;
  // OpenTelemetry's documented hook for ES modules (import-in-the-middle). On Node 20 an
  // ESM import of `pg` also passes through the CommonJS loader, where require-in-the-middle
  // sees it (traces came through without the hook, tried), but that is the loader's detail,
  // not a promise. Limited to the hooked packages: every other module loads untouched.
  const { register } = await import('node:module');
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: ['http', 'https', 'node:http', 'node:https', 'pg', 'pg-pool'] },
  });
  const [{ NodeSDK }, { HttpInstrumentation }, { UndiciInstrumentation }, { PgInstrumentation }, api] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/api'),
  ]);
  const named = Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  sdk = new NodeSDK({
    ...(named ? {} : { serviceName: 'gateway' }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Headers are never recorded (no headersToSpanAttributes): they carry the credentials.
      // The API takes none in the query string, but a client may put one there by mistake.
      new HttpInstrumentation({ redactedQueryParamsServer: REDACTED_QUERY_PARAMS }),
      // Engine calls within a request; the health checks of the nodes start no trace of their own.
      new UndiciInstrumentation({ requireParentforSpans: true }),
      // Statements with their $n placeholders, never the values bound to them
      // (enhancedDatabaseReporting stays off): values include key hashes and user content.
      // Queries outside a traced request (background work, pool upkeep) start no trace of their own.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
    ],
  });
  sdk.start();
  traceWith(api);
}

/**
 * Exports the spans still buffered and stops the SDK; nothing to do when tracing is off.
 * A collector that cannot be reached does not fail the stop (the SDK reports it on stderr
 * with OTEL_LOG_LEVEL; the export gives up after OTEL_EXPORTER_OTLP_TIMEOUT).
 */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  activeSpan = undefined;
  finishedWork = undefined;
  await running?.shutdown().catch(() => undefined);
}
