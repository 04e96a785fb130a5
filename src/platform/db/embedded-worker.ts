// Worker thread that owns the embedded PGlite database and serves it over the
// PostgreSQL wire protocol on a Unix socket. Queries run here, so a slow query
// never blocks the gateway's request thread; the gateway talks to it with `pg`.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const { dataDir, socketPath } = workerData as { dataDir: string; socketPath: string };

const db = await PGlite.create(dataDir, { extensions: { vector } });
// The gateway's pool holds one connection at a time, but pg-pool destroys a
// connection after any failed query (a unique violation included) and dials
// again at once, before this side has seen the old socket close; with a cap of
// 1 that new connection was dropped (ECONNRESET, a 500 on the next request).
const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 4 });
await server.start();
parentPort!.postMessage({ ready: true });

parentPort!.on('message', async (message: { stop?: boolean }) => {
  if (!message.stop) return;
  await server.stop();
  await db.close();
  parentPort!.postMessage({ stopped: true });
});
