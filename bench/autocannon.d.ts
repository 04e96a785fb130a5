// The parts of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  export interface Histogram {
    average: number;
    min: number;
    max: number;
    stddev: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    total: number;
  }
  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    workers?: number;
    timeout?: number;
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats?: Record<string, { count: number }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
