// Requests that do not come from one route's schema: HTTP that node:http will not
// send (no Host, bytes no client should write), and the limits of the edge itself
// (a body over the limit, a URL and headers too large). Each is sent once per run.
import type { FuzzCase, Fixture } from './cases.js';

type Special = Omit<FuzzCase, 'n'>;
const CRLF = '\r\n';

function raw(input: string, lines: (host: string) => string[], body = '', expect?: FuzzCase['expect']): Special {
  return {
    route: 'special',
    credential: 'n/a',
    method: lines('h')[0]!.split(' ')[0]!,
    path: lines('h')[0]!.split(' ')[1] ?? '',
    headers: {},
    raw: (host) => Buffer.concat([Buffer.from(lines(host).join(CRLF) + CRLF + CRLF, 'latin1'), Buffer.from(body)]),
    input,
    ...(expect ? { expect } : {}),
  };
}

export function specialCases(fx: Fixture): Special[] {
  const key = fx.apiKey;
  const overLimit = Buffer.from(JSON.stringify({ name: 'big', description: 'd'.repeat(1024 * 1024 + 100) }));
  const tooLarge = { statuses: [413], why: 'a body over the 1 MiB limit is refused before any handler' };
  return [
    // A request without Host is a client error: answered in the one problem shape like every other.
    raw('no Host header', () => ['GET /health HTTP/1.1', 'Connection: close']),
    raw(
      'no Host header, POST with a body',
      () => ['POST /api/auth/login HTTP/1.1', 'Content-Type: application/json', 'Content-Length: 2', 'Connection: close'],
      '{}',
    ),
    raw('HTTP/1.0 without Host', () => ['GET /health HTTP/1.0']),
    raw('control character in a header value', (h) => ['GET /health HTTP/1.1', `Host: ${h}`, 'X-Fuzz: a\u0001b', 'Connection: close']),
    raw('raw UTF-8 bytes in the path', (h) => [
      Buffer.from('GET /api/os/workspaces/\u00fc-\ud835\udd4f HTTP/1.1').toString('latin1'),
      `Host: ${h}`,
      `X-API-Key: ${key}`,
      'Connection: close',
    ]),
    raw(
      'two different Content-Length headers',
      (h) => [
        'POST /api/auth/login HTTP/1.1',
        `Host: ${h}`,
        'Content-Type: application/json',
        'Content-Length: 2',
        'Content-Length: 3',
        'Connection: close',
      ],
      '{}',
    ),
    raw(
      'Content-Length and Transfer-Encoding together',
      (h) => [
        'POST /api/auth/login HTTP/1.1',
        `Host: ${h}`,
        'Content-Type: application/json',
        'Content-Length: 5',
        'Transfer-Encoding: chunked',
        'Connection: close',
      ],
      '2\r\n{}\r\n0\r\n\r\n',
    ),
    raw('absolute-form request target', (h) => [`GET http://${h}/health HTTP/1.1`, `Host: ${h}`, 'Connection: close']),
    raw('unknown method', (h) => ['FUZZ /health HTTP/1.1', `Host: ${h}`, 'Connection: close']),
    raw('HTTP/9.9', (h) => ['GET /health HTTP/9.9', `Host: ${h}`, 'Connection: close']),
    raw('two Host headers', (h) => [
      'GET /api/os/workspaces HTTP/1.1',
      `Host: ${h}`,
      'Host: evil.example',
      `X-API-Key: ${key}`,
      'Connection: close',
    ]),
    raw('obsolete line folding', (h) => [
      'GET /api/os/workspaces HTTP/1.1',
      `Host: ${h}`,
      `X-API-Key: ${key}`,
      ' folded',
      'Connection: close',
    ]),
    {
      route: 'special',
      credential: 'apiKey',
      method: 'POST',
      path: '/api/os/workspaces',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: overLimit,
      input: 'body 100 bytes over the 1 MiB limit',
      expect: tooLarge,
    },
    {
      route: 'special',
      credential: 'apiKey',
      method: 'POST',
      path: '/api/llm/v1/chat/completions',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      chunks: [overLimit.subarray(0, 600_000), overLimit.subarray(600_000)],
      input: 'chunked body over the 1 MiB limit',
      expect: tooLarge,
    },
    {
      route: 'special',
      credential: 'apiKey',
      method: 'GET',
      path: `/api/os/workspaces?q=${'u'.repeat(20_000)}`,
      headers: { 'x-api-key': key },
      input: 'URL of 20,000 chars',
    },
    {
      route: 'special',
      credential: 'apiKey',
      method: 'GET',
      path: '/api/os/workspaces',
      headers: { 'x-api-key': key, 'x-big': 'h'.repeat(20_000) },
      input: 'headers of 20 KB',
    },
    { route: 'special', credential: 'none', method: 'OPTIONS', path: '*', headers: {}, input: 'OPTIONS *' },
    {
      route: 'special',
      credential: 'none',
      method: 'OPTIONS',
      path: '/api/llm/v1/chat/completions',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key' },
      input: 'CORS preflight from a foreign origin',
    },
    {
      route: 'special',
      credential: 'apiKey',
      method: 'POST',
      path: '/api/os/workspaces',
      headers: { 'x-api-key': key, 'content-type': 'application/json', expect: '100-continue' },
      body: Buffer.from('{"name":"continued"}'),
      input: 'Expect: 100-continue',
    },
    // The OpenAI surface's own bounds, at and past them.
    json(
      key,
      '/api/llm/v1/embeddings',
      { model: fx.chatModel, input: Array.from({ length: 2048 }, (_, i) => `w${i}`) },
      '2,048 inputs',
      [200],
    ),
    json(key, '/api/llm/v1/embeddings', { model: fx.chatModel, input: Array.from({ length: 2049 }, () => 'w') }, '2,049 inputs', [400]),
    json(key, '/api/llm/v1/completions', { model: fx.chatModel, prompt: Array.from({ length: 129 }, () => 'p') }, '129 prompts', [400]),
    {
      route: 'special',
      credential: 'apiKey',
      method: 'GET',
      path: `/api/llm/v1/models/${'a/'.repeat(150)}`,
      headers: { 'x-api-key': key },
      input: 'a model id of 300 chars, slashes',
      expect: { statuses: [400, 404, 414], why: 'no model has that id' },
    },
  ];
}

function json(key: string, path: string, value: unknown, input: string, statuses: number[]): Special {
  return {
    route: 'special',
    credential: 'apiKey',
    method: 'POST',
    path,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(value)),
    input,
    expect: { statuses, why: 'the bound documented for the endpoint' },
  };
}
