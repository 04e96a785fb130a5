// The parts of a request around its JSON: content types and encodings, malformed
// JSON, path variants (odd ids, legacy casing, slashes, dot segments, encodings,
// query strings) and odd headers.
import type { Rng } from './prng.js';

export interface Variant {
  label: string;
  headers?: Record<string, string>;
  body?: Buffer;
  path?: string;
}

const MULTIPART =
  '--zz\r\nContent-Disposition: form-data; name="name"\r\n\r\nfuzz\r\n--zz\r\nContent-Disposition: form-data; name="file"; filename="a.json"\r\nContent-Type: application/json\r\n\r\n{}\r\n--zz--\r\n';

/** A valid JSON body sent under another content type, encoding or none. */
export function bodyVariant(json: string, rng: Rng): Variant {
  const as = (label: string, contentType: string | undefined, body: Buffer): Variant => ({
    label,
    body,
    headers: contentType === undefined ? {} : { 'content-type': contentType },
  });
  return rng.pick<() => Variant>([
    () => as('as text/plain', 'text/plain', Buffer.from(json)),
    () => as('form-urlencoded', 'application/x-www-form-urlencoded', Buffer.from('name=fuzz&__proto__[isAdmin]=1&a[b][c]=d')),
    () => as('multipart', 'multipart/form-data; boundary=zz', Buffer.from(MULTIPART)),
    () => as('JSON in latin1, declared', 'application/json; charset=latin1', Buffer.from(json.replace('"fuzz-', '"fuzzé-'), 'latin1')),
    () => as('JSON in UTF-16, declared', 'application/json; charset=utf-16le', Buffer.from(json, 'utf16le')),
    () => as('JSON in UTF-16, undeclared', 'application/json', Buffer.from(json, 'utf16le')),
    () => as('APPLICATION/JSON', 'APPLICATION/JSON', Buffer.from(json)),
    () => as('application/vnd.api+json', 'application/vnd.api+json', Buffer.from(json)),
    () => as('application/json-patch+json', 'application/json-patch+json', Buffer.from(json)),
    () => as('no content type', undefined, Buffer.from(json)),
    () => as('empty content type', '', Buffer.from(json)),
    () => as('octet-stream', 'application/octet-stream', Buffer.from(json)),
    () =>
      as('XML', 'application/xml', Buffer.from('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>')),
    () => as('JSON content type with junk parameters', 'application/json; charset=utf-8; boundary=x; q=0; =;', Buffer.from(json)),
    () => as('content type of 4,000 chars', `application/json; x=${'y'.repeat(4000)}`, Buffer.from(json)),
  ])();
}

/** A body declared as JSON that is not (or is JSON of the wrong shape at the top). */
export function malformedJson(rng: Rng): Variant {
  const [label, body] = rng.pick<[string, string | Buffer]>([
    ['empty body', ''],
    ['whitespace body', ' \n\t '],
    ['truncated JSON', '{"name":"fuzz'],
    ['unquoted keys', '{name: "fuzz"}'],
    ['single quotes', "{'name': 'fuzz'}"],
    ['BOM before JSON', '\ufeff{"name":"fuzz"}'],
    ['two documents', '{"name":"a"}{"name":"b"}'],
    ['trailing comma', '{"name":"fuzz",}'],
    ['NaN', '{"name":NaN}'],
    ['raw NUL byte in a string', '{"name":"a\u0000b"}'],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0xaf, 0x22, 0x7d])],
    ['JSON null', 'null'],
    ['JSON number 1e400', '1e400'],
    ['JSON string', '"fuzz"'],
    ['50,000 unclosed brackets', '['.repeat(50_000)],
    ['duplicate keys', '{"name":"a","name":{"x":1},"name":"b"}'],
  ]);
  return { label, body: Buffer.isBuffer(body) ? body : Buffer.from(body), headers: { 'content-type': 'application/json' } };
}

/** A path parameter no record has: encodings that decode to nothing good, lengths at and past the router's limit. */
export function garbageId(rng: Rng): string {
  return rng.pick([
    '%00',
    'a%00b',
    '%2e%2e',
    '..',
    '%2F',
    'x'.repeat(200),
    'x'.repeat(201),
    '%F0%9F%92%A9',
    '%C0%AE',
    '%E0%A4%A',
    '%',
    '%25',
    '__proto__',
    'constructor',
    'null',
    'ten_00000000000000000000000000',
    "'%20OR%201=1--",
    '%C3%BC',
    '%0d%0aX-Injected:%201',
    `key_${rng.word(26)}`,
  ]);
}

/** The same route reached by an odd path: legacy casing, slashes, dot segments, encodings, query strings. */
export function pathVariant(path: string, rng: Rng): Variant {
  const segments = path.split('/');
  const literal = () => {
    const at = segments.map((s, i) => (i > 0 && /^[a-z][a-z0-9-]*$/.test(s) ? i : -1)).filter((i) => i > 0);
    return at.length ? rng.pick(at) : 1;
  };
  return rng.pick<() => Variant>([
    () => ({
      label: 'legacy capitalized path',
      path: segments.map((s, i) => (i === literal() ? s.charAt(0).toUpperCase() + s.slice(1) : s)).join('/'),
    }),
    () => ({ label: 'path in capitals', path: path.toUpperCase() }),
    () => ({ label: 'trailing slash', path: `${path}/` }),
    () => ({ label: 'double slashes', path: path.replaceAll('/', '//') }),
    () => ({ label: 'dot segments', path: path.replace('/api/', '/api/./x/../') }),
    () => ({ label: 'percent-encoded letter', path: path.replace('/api/', '/%61pi/') }),
    () => ({ label: 'encoded slash', path: path.replace(/\/([^/]*)$/, '%2F$1') }),
    () => ({ label: 'NUL at the end', path: `${path}%00` }),
    () => ({ label: 'matrix parameter', path: `${path};jsessionid=1` }),
    () => ({ label: 'backslash', path: `${path}\\..\\` }),
    () => ({ label: 'query with NUL', path: `${path}?a=%00` }),
    () => ({ label: 'query with prototype keys', path: `${path}?__proto__[isAdmin]=1&constructor[prototype][x]=1` }),
    () => ({ label: 'repeated query keys', path: `${path}?a=1&a=2&a[]=3&a[x]=4` }),
    () => ({ label: 'broken query encoding', path: `${path}?%&%E0%A4%A=%` }),
    () => ({ label: '6,000-char query', path: `${path}?q=${'z'.repeat(6000)}` }),
    () => ({ label: 'fragment', path: `${path}#frag` }),
  ])();
}

/** Headers a client may send that the gateway must survive. */
export function headerVariant(rng: Rng): Variant {
  return rng.pick<Variant>([
    { label: 'own correlation id', headers: { 'x-correlation-id': `fuzz-corr-${rng.word(8)}` } },
    { label: 'correlation id of 65 chars', headers: { 'x-correlation-id': 'c'.repeat(65) } },
    { label: 'correlation id with spaces and latin1', headers: { 'x-correlation-id': 'a b\u00e9;\u00ff' } },
    { label: 'Accept: text/html', headers: { accept: 'text/html' } },
    { label: 'Accept: nothing acceptable', headers: { accept: 'application/xml;q=1, */*;q=0' } },
    { label: 'Accept: text/event-stream', headers: { accept: 'text/event-stream' } },
    { label: 'foreign Origin', headers: { origin: 'https://evil.example' } },
    { label: 'X-Forwarded-For junk', headers: { 'x-forwarded-for': '999.1.1.1, ::g, \u00ff', 'x-forwarded-proto': 'gopher' } },
    { label: 'Accept-Encoding junk', headers: { 'accept-encoding': 'gzip;q=2, br;q=-1, *' } },
    { label: 'Cookie junk', headers: { cookie: `refresh_token=${'%'.repeat(50)}; __proto__=1; a=\u00ff` } },
    { label: 'Range header', headers: { range: 'bytes=0-0,-1' } },
  ]);
}
