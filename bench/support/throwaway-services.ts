// A throwaway PostgreSQL and redis-server on loopback for a benchmark run, started the
// way .ci/run starts them (initdb in a temp dir, durability off, random ports; as the
// postgres user when run as root, since initdb refuses root) and removed on stop.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface ThrowawayServices {
  databaseUrl: string;
  redisUrl: string;
  stop(): void;
}

function postgresBin(): string {
  const preferred = '/usr/lib/postgresql/15/bin';
  if (existsSync(path.join(preferred, 'initdb'))) return preferred;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => path.join(base, v, 'bin')).find((bin) => existsSync(path.join(bin, 'initdb')));
  if (!found) throw new Error('PostgreSQL is not installed (/usr/lib/postgresql/*/bin): apt-get install postgresql');
  return found;
}

/** A loopback port that was just free. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startThrowawayServices(): Promise<ThrowawayServices> {
  const bin = postgresBin();
  const probe = spawnSync('redis-server', ['--version']);
  if (probe.error || probe.status !== 0) throw new Error('redis-server is not installed (apt-get install redis-server)');

  const dir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-pg-'));
  const asRoot = process.getuid?.() === 0;
  const asPostgres = (command: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const run = (command: string, args: string[]) => {
    const [file, argv] = asPostgres(command, args);
    execFileSync(file, argv, { stdio: 'pipe' });
  };
  if (asRoot) {
    if (spawnSync('id', ['-u', 'postgres']).status !== 0)
      execFileSync('useradd', ['--system', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'postgres']);
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, statSync(dir).gid);
  }
  const password = randomBytes(18).toString('hex');
  const pwfile = path.join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`);
  if (asRoot) chownSync(pwfile, statSync(dir).uid, statSync(dir).gid);
  const pgPort = await freePort();
  const redisPort = await freePort();
  const data = path.join(dir, 'data');
  let pgStarted = false;
  let redisStarted = false;
  const stop = () => {
    if (pgStarted) spawnSync(...asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-s', 'stop']));
    const pidFile = path.join(dir, 'redis.pid');
    if (redisStarted && existsSync(pidFile)) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGTERM');
      } catch {}
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run(path.join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    // Loopback TCP and a socket in the temp dir only; durability off: a throwaway server.
    const options = `-c listen_addresses=127.0.0.1 -p ${pgPort} -k ${dir} -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    run(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-s', '-o', options, 'start']);
    pgStarted = true;
    execFileSync('redis-server', [
      ...['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes'],
      ...['--dir', dir, '--pidfile', path.join(dir, 'redis.pid'), '--logfile', path.join(dir, 'redis.log')],
    ]);
    redisStarted = true;
    for (let i = 0; i < 50 && !existsSync(path.join(dir, 'redis.pid')); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  } catch (error) {
    stop();
    throw error;
  }
  return { databaseUrl: `postgres://postgres:${password}@127.0.0.1:${pgPort}/postgres`, redisUrl: `redis://127.0.0.1:${redisPort}`, stop };
}
