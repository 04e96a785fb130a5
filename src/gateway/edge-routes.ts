// Routes the gateway answers itself: liveness and removed endpoints.
import type { FastifyInstance } from 'fastify';
import { Type } from '@fastify/type-provider-typebox';
import { VERSION } from '../context.js';
import type { Database } from '../platform/db/database.js';
import type { CoordinationStatus } from '../platform/coordination/coordination.js';
import { AppError } from '../platform/errors.js';
import { BUILT_IN_EMBEDDER } from '../areas/os/embedders/embedders.js';

export interface EdgeDeps {
  db: Pick<Database, 'query' | 'kind'>;
  /** Whether pgvector is installed (AppContext.vector). */
  vector: boolean;
  coordination: { status(): CoordinationStatus };
  /** The built-in embedder's state (os/services.ts); null without pgvector. */
  os: { builtInEmbedder(): { model: string; state: 'idle' | 'preparing' | 'ready' | 'failed' } | null };
}

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  database: Type.Object({
    status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
    kind: Type.String(),
    vector: Type.Union([Type.Literal('available'), Type.Literal('unavailable')]),
  }),
  // local: in-process (one replica). redis degraded: Redis unreachable; this replica carries on alone
  // (validation caches last seconds, login throttling counts per replica) and reconnects by itself.
  coordination: Type.Object({
    kind: Type.Union([Type.Literal('redis'), Type.Literal('local')]),
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  }),
  // The built-in embedder converts its word vectors once per data dir (10-30 s) from the first start:
  // documents wait at stage preparing_embedder meanwhile. idle: not loaded (its worker stopped), loads
  // again on the next use. failed: the log says why (status degraded). off: no pgvector, nothing uses it.
  embedder: Type.Object({
    model: Type.String(),
    status: Type.Union([
      Type.Literal('preparing'),
      Type.Literal('ready'),
      Type.Literal('idle'),
      Type.Literal('failed'),
      Type.Literal('off'),
    ]),
  }),
});

export async function edgeRoutes(app: FastifyInstance, { deps }: { deps: EdgeDeps }): Promise<void> {
  // Liveness: always 200 while the process serves; the body says whether the database answers.
  app.get('/health', { config: { access: 'public' }, schema: { response: { 200: Health } } }, async () => {
    const up = await Promise.race([
      deps.db.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => setTimeout(resolve, 2000, false).unref()),
    ]);
    const coordination = deps.coordination.status();
    const builtIn = deps.os.builtInEmbedder();
    const embedder = builtIn ? { model: builtIn.model, status: builtIn.state } : { model: BUILT_IN_EMBEDDER, status: 'off' as const };
    return {
      status: up && coordination.status === 'ok' && embedder.status !== 'failed' ? 'ok' : 'degraded',
      version: VERSION,
      database: { status: up ? 'up' : 'down', kind: deps.db.kind, vector: deps.vector ? 'available' : 'unavailable' },
      coordination,
      embedder,
    };
  });

  // Spec 9.6: removed endpoints answer 410 with a detail naming the replacement, for any credential or none.
  // Answered in onRequest, before the body is read, so no body (malformed, any media type, too large) changes that.
  const gone = async () => {
    throw new AppError('GONE', 'This endpoint was removed. Use POST /api/llm/v1/chat/completions with "stream": true instead.');
  };
  const removed = {
    deprecated: true,
    summary: 'Removed: answers 410 Gone to any method. Use POST /api/llm/v1/chat/completions with "stream": true.',
  };
  app.all('/api/llm/v1/chat/stream', { config: { access: 'public' }, schema: removed, onRequest: gone }, gone);
}
