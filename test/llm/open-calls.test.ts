// OpenCalls reaches the calls in flight through the server's connections, over
// plain HTTP and over TLS (where the HTTP layer's socket is the TLS one).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { OpenCalls } from '../../src/areas/llm/calls/open-calls.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function serve(tls: boolean, handler: Handler) {
  const pems = tls
    ? await generate([{ name: 'commonName', value: 'open-calls.test' }], {
        keyType: 'ec',
        extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
      })
    : undefined;
  const server = pems ? https.createServer({ key: pems.private, cert: pems.cert }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  // A keep-alive client: the server must close the connection itself.
  const agent = tls ? new https.Agent({ keepAlive: true, ca: pems!.cert }) : new http.Agent({ keepAlive: true });
  const get = () =>
    new Promise<{ body: string; closed: Promise<void> }>((resolve, reject) => {
      const req = (tls ? https : http).get(url, { agent }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        const closed = new Promise<void>((done) => req.socket!.once('close', () => done()));
        res.on('end', () => resolve({ body, closed }));
      });
      req.on('error', reject);
    });
  return { server, get, close: () => new Promise((resolve) => server.close(resolve)).finally(() => agent.destroy()) };
}

for (const tls of [false, true]) {
  describe(`open calls over ${tls ? 'TLS' : 'plain HTTP'}`, () => {
    it('interrupts the call on each connection, closes the connection after its answer, and drains', { timeout: 10_000 }, async () => {
      const calls = new OpenCalls();
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      const { server, get, close } = await serve(tls, (_req, res) => {
        const client = calls.watch(res);
        client.signal.addEventListener('abort', () => {
          res.end(client.interrupted() ? 'interrupted' : client.gone() ? 'gone' : 'other');
          // As a handler does: it finishes its work (usage) after the answer.
          setTimeout(() => client.dispose(), 50);
        });
        entered();
      });
      calls.attach(server);
      try {
        const answer = get();
        await inHandler;
        assert.equal(calls.size, 1);
        calls.stop(0);
        const { body, closed } = await answer;
        assert.equal(body, 'interrupted');
        await closed;
        await calls.drained();
        assert.equal(calls.size, 0);
      } finally {
        await close();
      }
    });
  });
}
