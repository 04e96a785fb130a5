// Child process: the smallest correct proxy, the baseline the gateway is compared
// with. node:http in front, an undici Pool (keep-alive) behind, no auth, no parsing:
// the request body (small JSON) is read whole and sent on to the upstream's
// POST /v1/chat/completions; the answer (JSON or SSE) goes back chunk by chunk as it
// arrives, pausing when the client reads slowly, and a client that goes away
// destroys the upstream body, which makes undici abort the upstream request.
// Measured on this machine: stream.pipeline() for the answer added about 0.04 ms of
// CPU per request (as much as this whole proxy costs), and streaming the request
// body into undici as much again; a baseline built that way would flatter the gateway.
import http from 'node:http';
import { Pool } from 'undici';
import { announceReady } from './children.js';

// tsx turns source maps on; compiled production code runs without them (they make every Error costlier).
process.setSourceMapsEnabled(false);

const upstream = process.env.UPSTREAM_URL;
if (!upstream) throw new Error('UPSTREAM_URL is not set');
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 60_000 });

function forward(res: http.ServerResponse, body: Buffer): void {
  pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
    ({ statusCode, headers, body: answer }) => {
      const contentType = headers['content-type'];
      res.writeHead(statusCode, contentType ? { 'content-type': contentType } : {});
      answer.on('data', (chunk: Buffer) => {
        if (!res.write(chunk)) answer.pause();
      });
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
      res.on('drain', () => answer.resume());
      res.on('close', () => {
        if (!res.writableFinished) answer.destroy();
      });
    },
    () => {
      res.writeHead(502).end();
    },
  );
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    req.resume();
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => forward(res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
});
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  announceReady({ url: `http://127.0.0.1:${port}` });
});
