// HTTPS by default with a self-signed certificate generated once into the data
// dir; the operator's own files when given; plain HTTP with GATEWAY_TLS=off.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from 'selfsigned';
import { loadConfig } from '../../src/platform/config.js';
import { loadTls, tlsPaths } from '../../src/platform/tls.js';
import { TEST_TMP } from '../helpers/paths.js';
import { dataDirsForSuite, request, startInProcess } from '../cli/helpers.js';

describe('TLS', () => {
  const fresh = dataDirsForSuite();
  const scratch = mkdtempSync(path.join(TEST_TMP, 'tls-'));
  after(async () => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it('serves HTTPS with a self-signed certificate generated on first start and reused after', async () => {
    const data = await fresh();
    const paths = tlsPaths(data.dir);
    const first = await startInProcess(data.env);
    let fingerprint: string;
    try {
      assert.match(first.server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(first.server.tls?.source, 'generated');
      assert.equal(statSync(paths.key).mode & 0o777, 0o600);
      assert.equal(statSync(paths.dir).mode & 0o777, 0o700);
      const cert = new X509Certificate(readFileSync(paths.cert));
      fingerprint = cert.fingerprint256;
      for (const name of ['DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1'])
        assert.ok(cert.subjectAltName?.includes(name), `${name} in ${cert.subjectAltName}`);
      assert.ok(cert.checkHost('localhost'));
      assert.ok(cert.checkIP('::1'));

      const ca = readFileSync(paths.cert, 'utf8');
      const health = await request(`${first.server.url}/health`, { ca });
      assert.equal(health.status, 200);
      assert.equal(health.body.status, 'ok');
      // The same URL by name, as a browser on this machine would use it.
      assert.equal((await request(`${first.server.url.replace('127.0.0.1', 'localhost')}/health`, { ca })).status, 200);
      // A client that does not trust the certificate is refused: it really is TLS with this certificate.
      await assert.rejects(request(`${first.server.url}/health`), /self-signed certificate/);
      assert.match(first.printed.join('\n'), new RegExp(`self-signed certificate generated: ${paths.cert.replaceAll('/', '\\/')}`));
    } finally {
      await first.server.close();
    }

    const keyBefore = readFileSync(paths.key, 'utf8');
    const second = await startInProcess(data.env);
    try {
      assert.equal(second.server.tls?.source, 'reused');
      assert.equal(second.server.tls?.fingerprint, fingerprint!);
      assert.equal(readFileSync(paths.key, 'utf8'), keyBefore);
      assert.equal((await request(`${second.server.url}/health`, { ca: readFileSync(paths.cert, 'utf8') })).status, 200);
    } finally {
      await second.server.close();
    }
  });

  it('GATEWAY_TLS=off serves plain HTTP and writes no certificate', async () => {
    const data = await fresh();
    const gw = await startInProcess({ ...data.env, GATEWAY_TLS: 'off' });
    try {
      assert.match(gw.server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(gw.server.tls, undefined);
      const health = await request(`${gw.server.url}/health`);
      assert.equal(health.status, 200);
      assert.equal(existsSync(tlsPaths(data.dir).cert), false);
      assert.match(gw.printed.join('\n'), /TLS: +off/);
    } finally {
      await gw.server.close();
    }
  });

  it("uses the operator's certificate files when GATEWAY_TLS_CERT and GATEWAY_TLS_KEY are set", async () => {
    const pems = await generate([{ name: 'commonName', value: 'gateway.test' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });
    const certFile = path.join(scratch, 'operator-cert.pem');
    const keyFile = path.join(scratch, 'operator-key.pem');
    writeFileSync(certFile, pems.cert);
    writeFileSync(keyFile, pems.private, { mode: 0o600 });

    const data = await fresh();
    const gw = await startInProcess({ ...data.env, GATEWAY_TLS_CERT: certFile, GATEWAY_TLS_KEY: keyFile });
    try {
      assert.equal(gw.server.tls?.source, 'operator');
      assert.equal(gw.server.tls?.fingerprint, new X509Certificate(pems.cert).fingerprint256);
      assert.equal((await request(`${gw.server.url}/health`, { ca: pems.cert })).status, 200);
      assert.equal(existsSync(tlsPaths(data.dir).cert), false, 'no self-signed certificate is generated');
    } finally {
      await gw.server.close();
    }
  });

  it('rejects unusable operator files with a message naming the variable', async () => {
    const dataDir = path.join(scratch, 'unused');
    const other = await generate(undefined, { keyType: 'ec' });
    const mine = await generate(undefined, { keyType: 'ec' });
    const certFile = path.join(scratch, 'c.pem');
    const otherKey = path.join(scratch, 'other-key.pem');
    const junk = path.join(scratch, 'junk.pem');
    writeFileSync(certFile, mine.cert);
    writeFileSync(otherKey, other.private);
    writeFileSync(junk, 'not a pem');
    const load = (cert: string, key: string) =>
      loadTls(loadConfig({ GATEWAY_DATA_DIR: dataDir, GATEWAY_TLS_CERT: cert, GATEWAY_TLS_KEY: key }));

    await assert.rejects(load(path.join(scratch, 'missing.pem'), otherKey), /GATEWAY_TLS_CERT names a file that cannot be read/);
    await assert.rejects(load(junk, otherKey), /GATEWAY_TLS_CERT is not a PEM certificate/);
    await assert.rejects(load(certFile, junk), /GATEWAY_TLS_KEY is not a PEM private key/);
    await assert.rejects(load(certFile, otherKey), /GATEWAY_TLS_KEY does not belong to the certificate/);
    assert.throws(() => loadConfig({ GATEWAY_TLS_CERT: certFile }), /GATEWAY_TLS_KEY must be set together/);
  });

  it('replaces a damaged self-signed certificate instead of failing to start', async () => {
    const dataDir = path.join(scratch, 'damaged');
    const config = loadConfig({ GATEWAY_DATA_DIR: dataDir });
    const first = await loadTls(config);
    assert.equal(first?.source, 'generated');
    assert.equal((await loadTls(config))?.source, 'reused');
    writeFileSync(tlsPaths(dataDir).cert, 'garbage');
    const replaced = await loadTls(config);
    assert.equal(replaced?.source, 'generated');
    assert.notEqual(replaced?.fingerprint, first?.fingerprint);
  });
});
