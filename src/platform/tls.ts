// HTTPS by default. Without operator files, a self-signed certificate for the
// loopback names is generated on first start into <dataDir>/tls and reused on
// every later start, so a client that trusts it once keeps trusting it.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import path from 'node:path';
import { generate } from 'selfsigned';
import { ConfigError, type Config } from './config.js';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Where the certificate came from: the operator's files, or our self-signed one (new or reused). */
  source: 'operator' | 'generated' | 'reused';
  certFile: string;
  /** SHA-256 fingerprint, printed at start so a user can check what their client sees. */
  fingerprint: string;
  validTo: Date;
}

export const SELF_SIGNED_NAMES = { dns: ['localhost'], ip: ['127.0.0.1', '::1'] };
const VALIDITY_DAYS = 365;
// A certificate this close to expiry is replaced at start rather than left to lapse mid-run.
const RENEW_BEFORE_MS = 7 * 24 * 60 * 60 * 1000;

export function tlsPaths(dataDir: string) {
  const dir = path.join(dataDir, 'tls');
  return { dir, cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
}

/** The key and certificate to serve HTTPS with, or undefined when GATEWAY_TLS=off. */
export async function loadTls(config: Config): Promise<TlsMaterial | undefined> {
  if (!config.tls.enabled) return undefined;
  if (config.tls.certFile && config.tls.keyFile) return operatorFiles(config.tls.certFile, config.tls.keyFile);

  const paths = tlsPaths(config.dataDir);
  if (existsSync(paths.cert) && existsSync(paths.key)) {
    const key = readFileSync(paths.key, 'utf8');
    const cert = readFileSync(paths.cert, 'utf8');
    const parsed = parseCertificate(cert);
    if (reusable(parsed, key)) return material(key, cert, 'reused', paths.cert, parsed);
  }
  return generateSelfSigned(paths);
}

function operatorFiles(certFile: string, keyFile: string): TlsMaterial {
  const cert = readOrFail('GATEWAY_TLS_CERT', certFile);
  const key = readOrFail('GATEWAY_TLS_KEY', keyFile);
  const parsed = parseCertificate(cert);
  if (!parsed) throw new ConfigError('GATEWAY_TLS_CERT', `is not a PEM certificate: ${certFile}`);
  let matches = false;
  try {
    matches = parsed.checkPrivateKey(privateKeyOf(key));
  } catch {
    throw new ConfigError('GATEWAY_TLS_KEY', `is not a PEM private key: ${keyFile}`);
  }
  if (!matches) throw new ConfigError('GATEWAY_TLS_KEY', `does not belong to the certificate in GATEWAY_TLS_CERT (${keyFile})`);
  return material(key, cert, 'operator', path.resolve(certFile), parsed);
}

async function generateSelfSigned(paths: ReturnType<typeof tlsPaths>): Promise<TlsMaterial> {
  const notBeforeDate = new Date(Date.now() - 60_000); // tolerate small clock skew between client and server
  const notAfterDate = new Date(notBeforeDate.getTime() + VALIDITY_DAYS * 24 * 60 * 60 * 1000);
  const pems = await generate(
    [
      { name: 'commonName', value: 'localhost' },
      { name: 'organizationName', value: 'Gateway (self-signed)' },
    ],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: false, critical: true },
        { name: 'keyUsage', digitalSignature: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            ...SELF_SIGNED_NAMES.dns.map((value) => ({ type: 2 as const, value })),
            ...SELF_SIGNED_NAMES.ip.map((ip) => ({ type: 7 as const, ip })),
          ],
        },
      ],
    },
  );
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  chmodSync(paths.dir, 0o700);
  // Key first, then certificate, each written whole and renamed into place:
  // a crash never leaves a certificate without its key, or a half-written file.
  writeAtomically(paths.key, pems.private, 0o600);
  writeAtomically(paths.cert, pems.cert, 0o644);
  return material(pems.private, pems.cert, 'generated', paths.cert, parseCertificate(pems.cert)!);
}

function writeAtomically(file: string, content: string, mode: number): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, content, { mode });
  chmodSync(temp, mode); // the umask may have narrowed or widened `mode`
  renameSync(temp, file);
}

function material(key: string, cert: string, source: TlsMaterial['source'], certFile: string, parsed: X509Certificate): TlsMaterial {
  return { key, cert, source, certFile, fingerprint: parsed.fingerprint256, validTo: new Date(parsed.validTo) };
}

function readOrFail(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(variable, `names a file that cannot be read: ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function parseCertificate(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

function privateKeyOf(pem: string): KeyObject {
  return createPrivateKey(pem);
}

/** Our own certificate is reusable when it parses, matches its key and is not about to expire. */
function reusable(cert: X509Certificate | undefined, key: string): cert is X509Certificate {
  if (!cert) return false;
  try {
    if (!cert.checkPrivateKey(privateKeyOf(key))) return false;
  } catch {
    return false;
  }
  return new Date(cert.validTo).getTime() - Date.now() > RENEW_BEFORE_MS;
}
