// GATEWAY_WORKERS: `gateway start` (bin/gateway.js, as operators run it) with two worker
// processes sharing the listener on PostgreSQL and Redis. Requests land on both (told
// apart by the `pid` of each access-log line), a key revoked through one is refused by
// every worker (told, not left to its cache's end), a worker killed with SIGKILL is replaced while the
// other serves on, and SIGTERM stops them all with status 0. On the embedded database
// the gateway stays one process and says why; PostgreSQL without REDIS_URL and bad
// values are refused at start, naming the variable.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ON_POSTGRES, REPO_ROOT, freshDataDir, request, watchOutput, type DataDir, type OutputWatch } from '../cli/helpers.js';
import { START_NODE_FLAGS } from '../../src/cli/start-flags.js';
import { eventually } from '../helpers/eventually.js';
import { Scrape } from '../helpers/prometheus.js';

const BIN = path.join(REPO_ROOT, 'bin/gateway.js');
const HAS_PROC = existsSync('/proc/self/cmdline');
const started = new Set<number>();
const METRICS_TOKEN = 'workers-metrics-token-0123456789';

interface Started extends Pick<OutputWatch, 'output' | 'stdout' | 'waitFor'> {
  pid: number;
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `node bin/gateway.js start` with only the environment given (and PATH, HOME). */
function startBin(env: Record<string, string>, options: { detached?: boolean } = {}): Started {
  const child = spawn(process.execPath, [BIN, 'start'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GATEWAY_TLS: 'off', PORT: '0', GATEWAY_LOCAL_ENGINE: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a test can signal the group as a terminal's Ctrl-C does.
    detached: options.detached ?? false,
  });
  started.add(child.pid!);
  const watch = watchOutput(child);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      started.delete(child.pid!);
      watch.closed();
      resolve({ code, signal });
    }),
  );
  return { pid: child.pid!, ended, output: watch.output, stdout: watch.stdout, waitFor: watch.waitFor };
}

after(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** Waits (the log is written in batches, a moment after the answer) until exactly `expected` processes have answered `url` with `status`. */
async function answeredBy(stdout: () => string, url: string, status: number, expected: number[]): Promise<void> {
  const want = [...expected].sort().join(',');
  await eventually(`${url} ${status} answered by ${want}`, () => [...pidsThatAnswered(stdout(), url, status)].sort().join(',') === want);
}

/** The processes that answered `url` with `status`, from the access log's `pid` (pino writes it on every line). */
function pidsThatAnswered(stdout: string, url: string, status: number): Set<number> {
  const pids = new Set<number>();
  for (const line of stdout.split('\n')) {
    let entry: { msg?: string; pid?: number; req?: { url?: string }; res?: { statusCode?: number } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue; // the banner's lines, or a line cut where the output was sliced
    }
    if (entry.msg === 'request completed' && entry.req?.url === url && entry.res?.statusCode === status) pids.add(entry.pid!);
  }
  return pids;
}

describe('GATEWAY_WORKERS: refused at start', () => {
  for (const value of ['0', '-1', 'x', '1000']) {
    it(`GATEWAY_WORKERS=${value} is a start error naming the variable`, async () => {
      const gateway = startBin({ GATEWAY_WORKERS: value });
      assert.deepEqual(await gateway.ended, { code: 1, signal: null });
      assert.match(gateway.output(), /^error: Invalid configuration: GATEWAY_WORKERS must be a whole number from 1 to 256, or "auto"/);
    });
  }

  it('several workers on PostgreSQL without REDIS_URL: refused, naming REDIS_URL and why', async () => {
    // Refused before any database is opened: the URL need not answer.
    const gateway = startBin({ GATEWAY_WORKERS: '2', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    assert.deepEqual(await gateway.ended, { code: 1, signal: null });
    assert.match(
      gateway.output(),
      /^error: Invalid configuration: REDIS_URL is required for GATEWAY_WORKERS=2: .*every limit multiplied by 2/,
    );
  });
});

describe('GATEWAY_WORKERS on the embedded database', {
  skip: (ON_POSTGRES && 'the embedded case') || (!HAS_PROC && 'reads /proc (Linux)'),
}, () => {
  let data: DataDir;
  before(async () => {
    data = await freshDataDir();
  });
  after(async () => data?.remove());

  it('stays one process and says why', async () => {
    const gateway = startBin({ ...data.env, GATEWAY_WORKERS: '2' });
    const [, url] = await gateway.waitFor(/is running at (http:\/\/127\.0\.0\.1:\d+)/);
    assert.match(
      gateway.output(),
      /GATEWAY_WORKERS=2: running one process, as the embedded database \(PGlite\) belongs to the one process/,
    );
    assert.doesNotMatch(gateway.output(), /\[worker|Starting \d+ workers/);
    const [server] = childrenOf(gateway.pid);
    assert.ok(server !== undefined);
    assert.deepEqual(childrenOf(server), [], 'the server forked no workers');
    assert.equal((await request(`${url}/health`)).status, 200);
    process.kill(gateway.pid, 'SIGTERM');
    assert.deepEqual(await gateway.ended, { code: 0, signal: null });
  });
});

const clusterSkip =
  !process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL
    ? 'workers need TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (.ci/run sets both)'
    : !HAS_PROC && 'reads /proc (Linux)';

describe('two workers on PostgreSQL and Redis', { skip: clusterSkip }, () => {
  let data: DataDir;
  let gateway: Started;
  let url: string;
  let workers: number[];
  let env: Record<string, string>;
  // A new connection per request: the primary hands connections to the workers in turn.
  const call = (method: string, route: string, headers: Record<string, string> = {}, json?: unknown) =>
    request(`${url}${route}`, { method, headers: { connection: 'close', ...headers }, ...(json !== undefined ? { json } : {}) });

  before(async () => {
    data = await freshDataDir();
    env = {
      ...data.env,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      GATEWAY_WORKERS: '2',
      GATEWAY_LOG_LEVEL: 'info',
      GATEWAY_TENANT: 'workers',
      GATEWAY_ADMIN_USERNAME: 'admin',
      GATEWAY_ADMIN_PASSWORD: 'workers-admin-password-1',
      GATEWAY_METRICS_TOKEN: METRICS_TOKEN,
    };
    gateway = startBin(env);
    [, url] = (await gateway.waitFor(/\[worker 1\] Gateway \S+ is running at (http:\/\/127\.0\.0\.1:\d+)/)) as [string, string];
    const [, a, b] = await gateway.waitFor(/All 2 workers are serving \(pids (\d+), (\d+)\)/);
    workers = [Number(a), Number(b)];
  });
  after(async () => data?.remove());

  it('starts two workers with the V8 settings of `start`, each printing its pid, the first tenant created once', () => {
    const output = gateway.output();
    for (const pid of workers) {
      assert.match(output, new RegExp(`is running at ${url} \\(worker \\d, pid ${pid}; 2 workers\\)`));
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      for (const flag of START_NODE_FLAGS) assert.ok(cmdline.includes(flag), cmdline.join(' '));
    }
    assert.equal(output.match(/Created the first tenant/g)?.length, 1, output);
  });

  it('both workers serve requests', async () => {
    for (let i = 0; i < 6; i++) assert.equal((await call('GET', '/health')).status, 200);
    await answeredBy(gateway.stdout, '/health', 200, workers);
  });

  it("/metrics reaching either worker counts every worker's requests", async () => {
    const scrape = async () => {
      const res = await call('GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
      assert.equal(res.status, 200, res.text);
      return new Scrape(res.text);
    };
    const health = { method: 'GET', route: '/health', status: '200' };
    const counted = (scraped: Scrape) => scraped.value('gateway_http_requests_total', health);
    const before = counted(await scrape());
    for (let i = 0; i < 10; i++) assert.equal((await call('GET', '/health')).status, 200);
    // Scrapes land on both workers in turn; each answers with the sum over both.
    for (let i = 0; i < 4; i++) assert.equal(counted(await scrape()) - before, 10);
    await answeredBy(gateway.stdout, '/metrics', 200, workers);
  });

  it('a key revoked through one worker is refused by every worker, long before its cache entry runs out', async () => {
    const login = await call('POST', '/api/auth/login', {}, { username: 'admin', password: 'workers-admin-password-1' });
    assert.equal(login.status, 200, login.text);
    const admin = { authorization: `Bearer ${login.body.token}` };
    const tenantId: string = login.body.user.tenantId;
    const created = await call('POST', `/api/auth/tenants/${tenantId}/api-keys`, admin, { name: 'workers' });
    assert.equal(created.status, 201, created.text);
    const models = () => call('GET', '/api/llm/v1/models', { 'x-api-key': created.body.key });
    for (let i = 0; i < 4; i++) assert.equal((await models()).status, 200);
    await answeredBy(gateway.stdout, '/api/llm/v1/models', 200, workers); // both have the key cached

    const revoked = await call('POST', `/api/auth/tenants/${tenantId}/api-keys/${created.body.id}/revoke`, admin);
    assert.equal(revoked.status, 200, revoked.text);
    // Refused four times running: by both workers, in turn. The key cache keeps an entry
    // for GATEWAY_KEY_CACHE_TTL_SECONDS (300 s by default): refused within this far shorter
    // deadline, the other worker heard of the revocation rather than let its entry run out.
    let refusedInARow = 0;
    await eventually(
      'every worker refuses the revoked key',
      async () => {
        refusedInARow = (await models()).status === 401 ? refusedInARow + 1 : 0;
        return refusedInARow >= 4;
      },
      60_000,
    );
    await answeredBy(gateway.stdout, '/api/llm/v1/models', 401, workers);
  });

  it('a worker killed with SIGKILL is replaced, and service goes on', async () => {
    const [survivor, victim] = workers as [number, number];
    process.kill(victim, 'SIGKILL');
    await gateway.waitFor(new RegExp(`Worker \\d+ \\(pid ${victim}\\) ended unexpectedly \\(signal SIGKILL\\); starting a replacement`));
    for (let i = 0; i < 4; i++) assert.equal((await call('GET', '/health')).status, 200, 'the other worker serves meanwhile');
    const [, replacement] = await gateway.waitFor(/\[worker 3\] Gateway \S+ is running at \S+ \(worker 3, pid (\d+); 2 workers\)/);
    workers = [survivor, Number(replacement)];
    const mark = gateway.stdout().length;
    for (let i = 0; i < 6; i++) assert.equal((await call('GET', '/health')).status, 200);
    await answeredBy(() => gateway.stdout().slice(mark), '/health', 200, workers);
  });

  it('SIGTERM stops every worker gracefully, and `gateway start` ends with status 0', async () => {
    process.kill(gateway.pid, 'SIGTERM');
    assert.deepEqual(await gateway.ended, { code: 0, signal: null });
    const output = gateway.output();
    assert.match(output, /Received SIGTERM: stopping the workers/);
    assert.equal(output.match(/\] Stopped\./g)?.length, 2, output);
    assert.match(output, /All workers stopped\./);
    for (const pid of workers) assert.equal(alive(pid), false, `worker ${pid} ended`);
  });

  it("a terminal's Ctrl-C, which reaches every process, is one graceful stop", async () => {
    const again = startBin(env, { detached: true });
    const [, a, b] = await again.waitFor(/All 2 workers are serving \(pids (\d+), (\d+)\)/);
    process.kill(-again.pid, 'SIGINT'); // the whole process group, as a terminal does
    assert.deepEqual(await again.ended, { code: 0, signal: null });
    assert.doesNotMatch(again.output(), /again: exiting now/);
    assert.equal(again.output().match(/\] Stopped\./g)?.length, 2, again.output());
    for (const pid of [a, b]) assert.equal(alive(Number(pid)), false, `worker ${pid} ended`);
  });

  it('workers that keep dying end `gateway start` with status 1 rather than restarting forever', async () => {
    const looping = startBin(env);
    await looping.waitFor(/All 2 workers are serving/);
    const [primary] = childrenOf(looping.pid);
    assert.ok(primary !== undefined);
    // Every worker the primary has, killed as soon as it is seen, replacements included.
    while (alive(primary)) {
      for (const worker of existsSync(`/proc/${primary}`) ? childrenOf(primary) : []) {
        try {
          process.kill(worker, 'SIGKILL');
        } catch {}
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(await looping.ended, { code: 1, signal: null });
    assert.match(looping.output(), /Workers ended unexpectedly 6 times within 60 s: stopping\./);
  });
});
