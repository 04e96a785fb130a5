// CSRF on the routes the refresh cookie authorises by itself (POST /api/auth/refresh and
// /logout, src/areas/auth/sessions/cross-site.ts): the cookie is used only from the
// gateway's own origin or an allowed one, never when the browser says the request is
// cross-site, and never with a body a plain HTML form could send. Clients that are not
// browsers (no Origin, no Sec-Fetch-Site), and any client sending the token in its JSON
// body, work as before.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { startGateway, seedTenant, type TestGateway, type TestResponse } from '../helpers/gateway.js';
import { buildApp } from '../../src/gateway/app.js';

const COOKIE = 'service_refresh_token';
const ALLOWED = 'https://app.example.com';

describe('auth sessions: the refresh cookie refuses cross-site use', () => {
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<typeof seedTenant>>;

  before(async () => {
    gw = await startGateway({ GATEWAY_CORS_ORIGINS: ALLOWED });
    tenant = await seedTenant(gw, 'csrf');
  });
  after(() => gw.close());

  /** A fresh session's refresh token (a new family each time, so one test's refusals cannot touch another's). */
  const signIn = async (): Promise<string> => {
    const response = await gw.request('POST', '/api/auth/login', {
      json: { username: tenant.admin.username, password: tenant.admin.password },
    });
    assert.equal(response.status, 200);
    return response.body.refreshToken;
  };
  const withCookie = (token: string, headers: Record<string, string> = {}) => ({ cookie: `${COOKIE}=${token}`, ...headers });
  /** Whether the token still refreshes (and so was neither used nor revoked by what came before); rotates it. */
  const stillValid = async (token: string) =>
    (await gw.request('POST', '/api/auth/refresh', { json: { refreshToken: token } })).status === 200;

  function assertRefused(response: TestResponse, status: number, detail: RegExp, label: string) {
    assert.equal(response.status, status, `${label}: ${response.text}`);
    assert.match(String(response.headers.get('content-type')), /^application\/problem\+json/, label);
    assert.match(response.body.detail, detail, label);
    assert.equal(
      response.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`)),
      undefined,
      `${label}: the cookie is left alone`,
    );
  }

  it('refreshes and logs out through the cookie from the gateway’s own pages and from an allowed origin', async () => {
    const own = gw.url;
    for (const [label, headers] of [
      ['own origin, JSON body', { origin: own, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }],
      ['own origin, no body', { origin: own, 'sec-fetch-site': 'same-origin' }],
      ['own origin, JSON with a charset', { origin: own, 'content-type': 'application/json; charset=utf-8' }],
      ['allowed origin', { origin: ALLOWED, 'sec-fetch-site': 'same-site' }],
      ['no Origin and no Sec-Fetch-Site: not a browser', {}],
    ] as const) {
      const token = await signIn();
      const body = 'content-type' in headers ? { body: '{}' } : {};
      const refreshed = await gw.request('POST', '/api/auth/refresh', { headers: withCookie(token, headers), ...body });
      assert.equal(refreshed.status, 200, `${label}: ${refreshed.text}`);
      assert.ok(
        refreshed.headers.getSetCookie().some((c) => c.startsWith(`${COOKIE}=${refreshed.body.refreshToken}`)),
        label,
      );
      const out = await gw.request('POST', '/api/auth/logout', { headers: withCookie(refreshed.body.refreshToken, headers), ...body });
      assert.equal(out.status, 204, `${label}: ${out.text}`);
      assert.equal(await stillValid(refreshed.body.refreshToken), false, `${label}: logged out`);
    }
  });

  it('refuses the cookie from another origin, an opaque one, a browser without Origin, or a request the browser marks cross-site', async () => {
    const [host, port] = [new URL(gw.url).hostname, new URL(gw.url).port];
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['foreign origin', { origin: 'https://evil.example' }, /"https:\/\/evil\.example", which is neither this gateway's origin/],
      ['foreign origin the browser calls same-site', { origin: 'https://evil.example.com', 'sec-fetch-site': 'same-site' }, /neither/],
      ['same host, other scheme', { origin: `https://${host}:${port}` }, /neither/],
      ['same host, other port', { origin: `http://${host}:1` }, /neither/],
      ['opaque origin (sandboxed frame, file:)', { origin: 'null' }, /"null"/],
      ['cross-site, even with our own Origin', { origin: gw.url, 'sec-fetch-site': 'cross-site' }, /Sec-Fetch-Site: cross-site/],
      ['cross-site without Origin', { 'sec-fetch-site': 'cross-site' }, /Sec-Fetch-Site: cross-site/],
      ['a browser request without Origin', { 'sec-fetch-site': 'same-origin' }, /no Origin header/],
      [
        'a forged forwarded host (no trusted proxy)',
        { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
        /neither/,
      ],
    ];
    for (const [label, headers, detail] of cases) {
      const token = await signIn();
      for (const route of ['refresh', 'logout']) {
        const refused = await gw.request('POST', `/api/auth/${route}`, { headers: withCookie(token, headers) });
        assertRefused(refused, 403, detail, `${route}, ${label}`);
        assert.equal(refused.body.code, 'FORBIDDEN');
        assert.match(refused.body.detail, /refresh token in the JSON body instead/);
      }
      assert.equal(await stillValid(token), true, `${label}: the session was neither rotated nor ended`);
    }
  });

  it('refuses bodies an HTML form can send (urlencoded, multipart, text/plain) with 415, with or without a token in them', async () => {
    const token = await signIn();
    const boundary = '----form';
    const forms: Array<[string, string]> = [
      ['application/x-www-form-urlencoded', `refreshToken=${token}`],
      [
        'multipart/form-data; boundary=----form',
        `--${boundary}\r\nContent-Disposition: form-data; name="refreshToken"\r\n\r\n${token}\r\n--${boundary}--\r\n`,
      ],
      ['text/plain', `{"refreshToken":"${token}"}`],
      ['text/plain', ''],
      ['application/xml', '<refreshToken/>'],
    ];
    for (const [type, body] of forms) {
      for (const route of ['refresh', 'logout']) {
        const label = `${route} as ${type} ${body ? 'with' : 'without'} a body`;
        const refused = await gw.request('POST', `/api/auth/${route}`, {
          headers: withCookie(token, { 'content-type': type, origin: gw.url }),
          body,
        });
        assertRefused(refused, 415, /application\/json/, label);
        assert.equal(refused.body.code, 'UNSUPPORTED_MEDIA_TYPE');
      }
    }
    assert.equal(await stillValid(token), true, 'no form post used or ended the session');
  });

  it('takes a refresh token in the JSON body from any client: no Origin, or any Origin (a page cannot read the token to send it)', async () => {
    let token = await signIn();
    const clients: Record<string, string>[] = [{}, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }];
    for (const headers of clients) {
      const refreshed = await gw.request('POST', '/api/auth/refresh', { headers, json: { refreshToken: token } });
      assert.equal(refreshed.status, 200, JSON.stringify(headers));
      token = refreshed.body.refreshToken;
    }
    const out = await gw.request('POST', '/api/auth/logout', { json: { refreshToken: token } });
    assert.equal(out.status, 204);
    assert.equal(await stillValid(token), false);
  });

  it('behind a trusted proxy, compares with the origin the browser saw (X-Forwarded-Proto and -Host)', async () => {
    const token = await signIn();
    const app = await buildApp(
      { ...gw.ctx, config: { ...gw.ctx.config, trustProxyHops: 1 } },
      { logStream: new Writable({ write: (_c, _e, done) => done() }) },
    );
    try {
      const send = (origin: string, refreshToken: string) =>
        app.inject({
          method: 'POST',
          url: '/api/auth/refresh',
          headers: {
            host: 'gateway.internal:8080',
            'x-forwarded-proto': 'https',
            'x-forwarded-host': 'console.example.com',
            origin,
            'sec-fetch-site': 'same-origin',
            cookie: `${COOKIE}=${refreshToken}`,
          },
        });
      const refused = await send('http://gateway.internal:8080', token);
      assert.equal(refused.statusCode, 403, refused.body);
      const accepted = await send('https://console.example.com', token);
      assert.equal(accepted.statusCode, 200, accepted.body);
    } finally {
      await app.close();
    }
  });
});
