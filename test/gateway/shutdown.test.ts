// During shutdown, requests that still arrive on an open connection get a 503
// problem with a correlation id, Retry-After: 1 and Connection: close, while the request in
// flight completes normally.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startGateway, seedTenant } from '../helpers/gateway.js';
import { createApiKey } from './support.js';

describe('edge: shutdown', () => {
  it('finishes the request in flight and answers a pipelined one with a 503 problem', async () => {
    const gw = await startGateway();
    try {
      const tenant = await seedTenant(gw, 'shutdown');
      const { key } = await createApiKey(gw, tenant.tenantId);
      assert.equal((await gw.request('GET', '/api/os/workspaces', { apiKey: key })).status, 200); // key cached

      // Stall the first request inside its handler (its list query) until we let it go.
      const db = gw.ctx.db as { query: typeof gw.ctx.db.query };
      const original = db.query;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      db.query = async (sql, params) => {
        if (/FROM workspaces/.test(sql)) {
          entered();
          await released;
        }
        return original(sql, params);
      };

      const { port } = new URL(gw.url);
      const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('utf8')));
      const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      const request = (id: string) =>
        `GET /api/os/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nX-Correlation-ID: ${id}\r\n\r\n`;
      socket.write(request('first'));
      await inHandler;

      const closing = gw.app.close();
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.write(request('second'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      db.query = original;
      await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error('connection stayed open')), 5000))]);
      await closing;

      const responses = received.split(/(?=HTTP\/1\.1 )/);
      assert.equal(responses.length, 2, received);
      assert.match(responses[0]!, /^HTTP\/1\.1 200 /);
      assert.match(responses[0]!, /x-correlation-id: first\r\n/i);
      assert.match(responses[1]!, /^HTTP\/1\.1 503 /);
      assert.match(responses[1]!, /x-correlation-id: second\r\n/i);
      assert.match(responses[1]!, /content-type: application\/problem\+json/i);
      assert.match(responses[1]!, /connection: close/i);
      assert.match(responses[1]!, /retry-after: 1\r\n/i);
      const problem = JSON.parse(responses[1]!.slice(responses[1]!.indexOf('\r\n\r\n') + 4));
      assert.equal(problem.code, 'SERVICE_UNAVAILABLE');
      assert.equal(problem.correlationId, 'second');
    } finally {
      await gw.close(); // closing the app a second time is a no-op; this closes the database and removes the copy
    }
  });

  it('does not wait on a connection that never sent a request', async () => {
    // Node counts such a connection as awaiting its first request, not idle, so its close
    // would wait for the headers timeout (set far beyond the test's own timeout here).
    const gw = await startGateway({ GATEWAY_HEADERS_TIMEOUT_MS: '600000', GATEWAY_REQUEST_TIMEOUT_MS: '600000' });
    try {
      const { port } = new URL(gw.url);
      const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.on('error', () => {});
      await gw.app.close();
      await ended;
    } finally {
      await gw.close();
    }
  });
});
