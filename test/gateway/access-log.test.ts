// The request log: one fixed-shape line per completed request through an unredacted
// logger (it can hold nothing secret), and a request that failed with an error
// logged through the request's own redacting logger instead, since an error may
// carry anything. On a real Fastify server with the gateway's logger options.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import pino from 'pino';
import { AccessLog } from '../../src/gateway/access-log.js';
import { loggerOptions } from '../../src/platform/logging.js';
import { eventually } from '../helpers/eventually.js';

const SECRET = 'rdk_0123456789abcdefghijklmnopqrstuvwxyz';

describe('access log', () => {
  const access: string[] = [];
  const own: string[] = [];
  const app = Fastify({
    // The failing request never gets an answer: closing must not wait for it.
    forceCloseConnections: true,
    loggerInstance: pino(loggerOptions('info'), { write: (line: string) => void own.push(line) }),
    logController: new AccessLog(pino(loggerOptions('info', false), { write: (line: string) => void access.push(line) })),
  });
  let base: string;

  before(async () => {
    app.get('/answers', async (_request, reply) => reply.code(502).send({ ok: false }));
    // The response stream fails after the handler: Fastify reports the request completed with that error.
    app.get('/fails', (_request, reply) => {
      setImmediate(() =>
        reply.raw.emit('error', Object.assign(new Error('the response stream failed'), { apiKey: SECRET, token: SECRET })),
      );
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  after(() => app.close());

  // A line is written when the response has finished, which may be just after the client
  // has read it: wait for the expected line, then a little longer so that a stray one shows.
  const settle = async (lines: string[], what: string) => {
    await eventually(`a "${what}" line`, () => lines.some((line) => line.includes(what)));
    await sleep(50);
  };

  it('writes one line per completed request: method, path without its query, address, status, time, correlation id', async () => {
    access.length = own.length = 0;
    await (await fetch(`${base}/answers?api_key=${SECRET}`, { headers: { 'x-api-key': SECRET } })).text();
    await settle(access, 'request completed');
    assert.equal(access.length, 1);
    const line = JSON.parse(access[0]!);
    assert.equal(line.msg, 'request completed');
    assert.equal(line.level, 30);
    assert.equal(typeof line.correlationId, 'string');
    assert.deepEqual(line.req, { method: 'GET', url: '/answers', ip: '127.0.0.1' });
    assert.deepEqual(line.res, { statusCode: 502 });
    assert.equal(typeof line.responseTime, 'number');
    assert.ok(!access[0]!.includes(SECRET));
    assert.deepEqual(own, []);
  });

  it("logs a request that failed with an error through the request's redacting logger, secrets redacted", async () => {
    access.length = own.length = 0;
    await fetch(`${base}/fails?key=${SECRET}`, { headers: { 'x-api-key': SECRET }, signal: AbortSignal.timeout(300) }).catch(
      () => undefined,
    );
    await settle(own, 'request errored');
    assert.deepEqual(access, [], 'not through the unredacted access logger');
    const errored = own.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request errored');
    assert.equal(errored.length, 1, own.join(''));
    const [line] = errored;
    assert.equal(line.level, 50);
    assert.equal(typeof line.correlationId, 'string');
    assert.equal(line.err.message, 'the response stream failed');
    assert.equal(line.err.apiKey, '[redacted]');
    assert.equal(line.err.token, '[redacted]');
    assert.equal(line.req.url, '/fails');
    assert.ok(!own.join('').includes(SECRET));
  });
});
