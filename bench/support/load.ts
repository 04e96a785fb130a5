// The three kinds of load the LLM benchmarks drive:
// - saturate(): autocannon at maximum throughput (closed loop, N connections).
// - paced(): an open-loop fixed rate, each request timed with performance.now().
//   autocannon's own rate limit (overallRate) is not used for this: it lets each
//   connection send its per-second quota back to back at the start of every second
//   and then sit idle, so it measures bursts rather than a steady rate, it records
//   latency in whole milliseconds, and it pads the histogram with coordinated-
//   omission samples at a 1 ms expected interval.
// - firstByte(): streaming requests one at a time (or a few at once), timing the
//   first body byte and the first token a client sees.
import autocannon from 'autocannon';
import { Pool } from 'undici';

export interface Target {
  name: string;
  /** Full URL of the chat/completions endpoint. */
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SaturationResult {
  requests: number;
  rps: number;
  /** autocannon's latency, ms (its histogram has millisecond resolution). */
  p50: number;
  p99: number;
  mean: number;
  non2xx: number;
  errors: number;
}

export async function saturate(target: Target, connections: number, durationSeconds: number): Promise<SaturationResult> {
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    connections,
    duration: durationSeconds,
    workers: 1,
    timeout: 10,
  });
  const requests = Object.values(result.statusCodeStats ?? {}).reduce((sum, s) => sum + Number(s.count), 0) || result.requests.total;
  return {
    requests,
    rps: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export interface PacedSamples {
  sent: number;
  /** How long sending took, s (achieved rate = sent / seconds). */
  seconds: number;
  /** Latency of each 2xx answer, ms. */
  latencies: number[];
  non2xx: number;
  errors: number;
}

function poolFor(target: Target, connections: number): { pool: Pool; path: string; headers: Record<string, string> } {
  const url = new URL(target.url);
  return {
    pool: new Pool(url.origin, { connections, keepAliveTimeout: 60_000 }),
    path: url.pathname,
    headers: { 'content-type': 'application/json', ...target.headers },
  };
}

/** Sends `rate` requests per second for `durationSeconds`, on schedule whatever the answers do. */
export async function paced(target: Target, rate: number, durationSeconds: number): Promise<PacedSamples> {
  const { pool, path, headers } = poolFor(target, 64);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const one = async () => {
    const t0 = performance.now();
    try {
      const { statusCode, body } = await pool.request({ path, method: 'POST', headers, body: target.body });
      await body.arrayBuffer();
      if (statusCode >= 200 && statusCode < 300) latencies.push(performance.now() - t0);
      else non2xx++;
    } catch {
      errors++;
    }
  };
  const total = Math.round(rate * durationSeconds);
  let sent = 0;
  const start = performance.now();
  try {
    await new Promise<void>((resolve) => {
      // Timers fire about every millisecond; each tick sends whatever the schedule says is due.
      const tick = () => {
        const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
        while (sent < due) {
          sent++;
          const request = one();
          inFlight.add(request);
          void request.finally(() => inFlight.delete(request));
        }
        if (sent >= total) resolve();
        else setTimeout(tick, 1);
      };
      tick();
    });
    const seconds = (performance.now() - start) / 1000;
    await Promise.all(inFlight);
    return { sent, seconds, latencies, non2xx, errors };
  } finally {
    await pool.close();
  }
}

export interface FirstByteSamples {
  /** Request sent → first body byte, ms. */
  firstBytes: number[];
  /** Request sent → the first frame carrying generated text, ms. */
  firstTokens: number[];
  /** Request sent → end of the stream, ms. */
  completes: number[];
  failures: number;
}

// The first frame whose delta carries non-empty content (role frames carry "").
const FIRST_TOKEN = /"delta":\{[^}]*"content":"[^"]/;

export async function firstByte(target: Target, requests: number, concurrency: number): Promise<FirstByteSamples> {
  const { pool, path, headers } = poolFor(target, concurrency);
  const firstBytes: number[] = [];
  const firstTokens: number[] = [];
  const completes: number[] = [];
  let failures = 0;
  let remaining = requests;
  const worker = async () => {
    while (remaining-- > 0) {
      const t0 = performance.now();
      try {
        const { statusCode, body } = await pool.request({ path, method: 'POST', headers, body: target.body });
        let first: number | undefined;
        let token: number | undefined;
        let text = '';
        for await (const chunk of body) {
          const now = performance.now();
          first ??= now;
          if (token === undefined) {
            text += (chunk as Buffer).toString('utf8');
            if (FIRST_TOKEN.test(text)) token = now;
          }
        }
        const end = performance.now();
        if (statusCode !== 200 || first === undefined || token === undefined) {
          failures++;
          continue;
        }
        firstBytes.push(first - t0);
        firstTokens.push(token - t0);
        completes.push(end - t0);
      } catch {
        failures++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { firstBytes, firstTokens, completes, failures };
  } finally {
    await pool.close();
  }
}
