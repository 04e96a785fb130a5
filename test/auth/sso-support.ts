// Real OpenID providers for the SSO tests: oidc-provider 9 in the test process, on
// loopback over HTTPS with a certificate the test makes, and a gateway in a child
// process that trusts it through NODE_EXTRA_CA_CERTS (the product has no switch to
// trust anything else). The test sets each IdP user's claims (email, email_verified,
// groups) and the amr of the next sign-in; the sign-in itself is scripted: the IdP's
// interaction page signs in whoever the test names and grants consent at once.
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { generate } from 'selfsigned';
import { Agent, fetch as undiciFetch } from 'undici';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { freshDatabase } from '../helpers/gateway.js';
import { TEST_TMP, WORD_VECTORS_FILE } from '../helpers/paths.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/replica-process.js';
import { mkdtempSync } from 'node:fs';

/** One certificate for every test IdP (all on 127.0.0.1), and the file the gateway is told to trust. */
export interface TestCa {
  key: string;
  cert: string;
  file: string;
  /** A dispatcher for the test's own requests to the IdPs. */
  agent: Agent;
}

export async function makeCa(dir: string): Promise<TestCa> {
  const pems = await generate([{ name: 'commonName', value: 'sso-test-idp' }], {
    keyType: 'ec',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const file = path.join(dir, 'idp-ca.pem');
  writeFileSync(file, pems.cert);
  return { key: pems.private, cert: pems.cert, file, agent: new Agent({ connect: { ca: pems.cert } }) };
}

export interface IdpUser {
  email?: string;
  email_verified?: boolean;
  groups?: string[];
  oid?: string;
  /** The amr (and acr) of this user's next sign-in. */
  amr?: string[];
  acr?: string;
}

export interface IdpClient {
  [field: string]: unknown;
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

/** What the IdP handed out, for the check that none of it reaches the gateway's log. */
export interface Handed {
  codes: string[];
  verifiers: string[];
  tokens: string[];
}

export interface TestIdp {
  issuer: string;
  users: Map<string, IdpUser>;
  /** The user the next interaction signs in. */
  loginAs: string | undefined;
  handed: Handed;
  /** The IdP session id (sid) of the last ID token issued to `sub`. */
  lastSid: Map<string, string>;
  /** Starts serving with these clients (the gateway's connections, whose redirect URIs are known only once they exist). */
  serve(clients: IdpClient[]): void;
  /** A logout token signed with the IdP's key (OpenID Connect Back-Channel Logout 1.0). */
  logoutToken(
    clientId: string,
    claims: { sub?: string; sid?: string },
    options?: { issuer?: string; key?: 'own' | 'foreign' },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startIdp(ca: TestCa): Promise<TestIdp> {
  const server = https.createServer({ key: ca.key, cert: ca.cert });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const users = new Map<string, IdpUser>();
  const handed: Handed = { codes: [], verifiers: [], tokens: [] };
  const lastSid = new Map<string, string>();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const foreign = (await generateKeyPair('RS256', { extractable: true })).privateKey;
  const idp: TestIdp = {
    issuer,
    users,
    loginAs: undefined,
    handed,
    lastSid,
    serve(clients) {
      const provider = new Provider(issuer, {
        clients,
        jwks: { keys: [jwk] },
        cookies: { keys: [randomBytes(16).toString('hex')] },
        pkce: { required: () => true },
        conformIdTokenClaims: false,
        claims: { openid: ['sub', 'groups', 'oid', 'acr', 'amr'], email: ['email', 'email_verified'], profile: ['name'] },
        features: {
          devInteractions: { enabled: false },
          // A plain logout page: the default one loads a web font from another origin (the console's browser walk forbids that).
          rpInitiatedLogout: {
            enabled: true,
            logoutSource: (ctx, form) => {
              ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title></head><body><h1>Sign out of the test IdP?</h1>${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button></body></html>`;
            },
          },
          backchannelLogout: { enabled: true },
        },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        findAccount: (_ctx, sub) => {
          const user = users.get(sub);
          if (!user) return undefined;
          const { amr: _amr, acr: _acr, ...claims } = user;
          return { accountId: sub, claims: () => ({ sub, ...claims }) };
        },
      });
      provider.on('grant.success', (ctx) => {
        const params = ctx.oidc.params as Record<string, unknown>;
        if (typeof params.code === 'string') handed.codes.push(params.code);
        if (typeof params.code_verifier === 'string') handed.verifiers.push(params.code_verifier);
        const body = ctx.body as Record<string, unknown>;
        for (const name of ['access_token', 'id_token', 'refresh_token'])
          if (typeof body?.[name] === 'string') handed.tokens.push(body[name] as string);
        if (typeof body?.id_token === 'string') {
          const claims = decodeJwt(body.id_token);
          if (typeof claims.sid === 'string' && typeof claims.sub === 'string') lastSid.set(claims.sub, claims.sid);
        }
      });
      const callback = provider.callback();
      server.on('request', async (req, res) => {
        const match = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
        if (!match) return callback(req, res);
        try {
          const details = await provider.interactionDetails(req, res);
          const sub = idp.loginAs;
          const user = sub ? users.get(sub) : undefined;
          if (!sub || !user) throw new Error(`the test named no IdP user to sign in (loginAs: ${sub})`);
          const grant = new provider.Grant({ accountId: sub, clientId: String(details.params.client_id) });
          grant.addOIDCScope(String(details.params.scope));
          const grantId = await grant.save();
          await provider.interactionFinished(
            req,
            res,
            {
              login: { accountId: sub, ...(user.amr ? { amr: user.amr } : {}), ...(user.acr ? { acr: user.acr } : {}) },
              consent: { grantId },
            },
            { mergeWithLastSubmission: false },
          );
        } catch (error) {
          res.statusCode = 500;
          res.end(String(error));
        }
      });
    },
    async logoutToken(clientId, claims, options = {}) {
      const key = options.key === 'foreign' ? foreign : privateKey;
      return new SignJWT({ ...claims, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })
        .setProtectedHeader({ alg: 'RS256', kid: 'test-key', typ: 'logout+jwt' })
        .setIssuer(options.issuer ?? issuer)
        .setAudience(clientId)
        .setIssuedAt()
        .setExpirationTime('2m')
        .setJti(randomBytes(12).toString('hex'))
        .sign(key);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return idp;
}

/** A browser's cookies, per origin, with Path and deletion honoured (Secure ignored: the gateway runs plain HTTP here). */
export class CookieJar {
  private readonly cookies = new Map<string, { value: string; path: string }>();

  store(origin: string, response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const [name, ...rest] = pair!.split('=');
      const value = rest.join('=');
      const pathAttribute = attributes.find((a) => a.toLowerCase().startsWith('path='));
      const gone = attributes.some((a) => /^max-age=0$/i.test(a) || /^expires=thu, 01 jan 1970/i.test(a)) || value === '';
      const key = `${origin} ${name}`;
      if (gone) this.cookies.delete(key);
      else this.cookies.set(key, { value, path: pathAttribute ? pathAttribute.slice(5) : '/' });
    }
  }

  header(url: URL): string {
    const sent: string[] = [];
    for (const [key, cookie] of this.cookies) {
      const [origin, name] = key.split(' ');
      if (origin === url.origin && url.pathname.startsWith(cookie.path)) sent.push(`${name}=${cookie.value}`);
    }
    return sent.join('; ');
  }

  get(origin: string, name: string): string | undefined {
    return this.cookies.get(`${origin} ${name}`)?.value;
  }

  /** A copy: two "browsers" that share what this one had so far. */
  clone(): CookieJar {
    const copy = new CookieJar();
    for (const [key, cookie] of this.cookies) copy.cookies.set(key, { ...cookie });
    return copy;
  }
}

/** A request as a browser makes it (no redirect followed), its cookies kept in `jar`. */
export async function browse(
  jar: CookieJar,
  url: string | URL,
  ca: TestCa,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  const target = new URL(url);
  const cookie = jar.header(target);
  const headers = { ...init.headers, ...(cookie ? { cookie } : {}) };
  const response = (await undiciFetch(target, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: init.body } : {}),
    redirect: 'manual',
    ...(target.protocol === 'https:' ? { dispatcher: ca.agent } : {}),
  })) as unknown as Response;
  jar.store(target.origin, response);
  return response;
}

/** The gateway a test's IdPs sign in to: a child process that trusts the test CA, its first tenant's platform admin bootstrapped. */
export interface SsoGateway {
  process: GatewayProcess;
  url: string;
  admin: { username: string; password: string; token: string };
  close(): Promise<void>;
}

export async function startSsoGateway(ca: TestCa, env: Record<string, string> = {}): Promise<SsoGateway> {
  const dataDir = mkdtempSync(path.join(TEST_TMP, 'sso-'));
  const database = await freshDatabase(dataDir);
  const admin = { username: 'sso-platform-admin', password: `pw-${randomBytes(9).toString('base64url')}` };
  const process = await startGatewayProcess(
    {
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      GATEWAY_SECRET: randomBytes(32).toString('base64url'),
      GATEWAY_TLS: 'off',
      HOST: '127.0.0.1',
      PORT: '0',
      GATEWAY_WORD_VECTORS_FILE: WORD_VECTORS_FILE,
      GATEWAY_LOG_LEVEL: 'info',
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_TENANT: 'SSO platform',
      GATEWAY_ADMIN_USERNAME: admin.username,
      GATEWAY_ADMIN_PASSWORD: admin.password,
      NODE_EXTRA_CA_CERTS: ca.file,
      ...env,
    },
    { dataDir },
  );
  const login = await process.request('POST', '/api/auth/login', { json: admin });
  if (login.status !== 200) throw new Error(`the bootstrapped admin could not sign in: ${login.status} ${login.text}`);
  return {
    process,
    url: process.url,
    admin: { ...admin, token: login.body.token },
    async close() {
      await process.close();
      await database.drop();
    },
  };
}
