// Runs the MCP project's conformance suite (@modelcontextprotocol/conformance, `server`
// mode) from node_modules against a gateway URL, and the loopback proxy that lets it: the
// suite sends no headers of its own, so the proxy adds the API key and passes everything
// else (Host and Origin included, which the dns-rebinding scenario is about) unchanged.
import { spawn } from 'node:child_process';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const conformanceCli = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export type Era = '2025-11-25' | '2026-07-28';
export const expectedFailuresFile = (era: Era) => path.join(here, `expected-failures.${era}.yaml`);

export interface KeyProxy {
  /** http://127.0.0.1:port/mcp: what the suite is pointed at. */
  url: string;
  origin: string;
  /** Set once the gateway runs: every request goes to this URL. */
  target: string;
  close(): Promise<void>;
}

export async function startKeyProxy(apiKey: () => string): Promise<KeyProxy> {
  const proxy: KeyProxy = { url: '', origin: '', target: '', close: async () => {} };
  // Its own connections, none kept open: the gateway's close then waits for none of them.
  const agent = new Agent({ keepAlive: false });
  const http = createServer((req, res) => {
    const target = new URL(proxy.target);
    const headers = { ...req.headers, 'x-api-key': apiKey() };
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    // The suite closing its stream (a 2026-07-28 cancel) must reach the gateway as a close too.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  proxy.origin = `http://127.0.0.1:${port}`;
  proxy.url = `${proxy.origin}/mcp`;
  proxy.close = async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    agent.destroy();
  };
  return proxy;
}

export interface SuiteRun {
  /** The suite's exit status: 0 when every failure is in the expected-failures file and none of them passed. */
  status: number | null;
  output: string;
}

/**
 * One era's requirement set (`--requirements <era>`: the scenarios that revision requires,
 * spoken at its own wire version) judged against that era's expected-failures file. The
 * suite stops by itself; `deadlineMs` only ends a run that hangs (it is then a failure).
 */
export function runConformance(url: string, era: Era, outputDir: string, deadlineMs = 240_000): Promise<SuiteRun> {
  const args = ['--import', path.join(here, 'node20-fs-glob.mjs'), conformanceCli, 'server', '--url', url];
  args.push('--requirements', era, '--expected-failures', expectedFailuresFile(era), '--output-dir', outputDir);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    // The suite colours its summary whatever NO_COLOR says: keep the text only.
    const colours = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
    const read = (chunk: Buffer) => (output += String(chunk).replace(colours, ''));
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    const deadline = setTimeout(() => {
      output += `\n[test] conformance run still going after ${deadlineMs} ms: stopped\n`;
      child.kill('SIGKILL');
    }, deadlineMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(deadline);
      resolve({ status, output });
    });
  });
}
