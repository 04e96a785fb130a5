// More of autocannon's options than bench/autocannon.d.ts declares (the two
// ambient declarations merge): the LLM benchmarks send POST bodies.
declare module 'autocannon' {
  interface Options {
    body?: string;
  }
}
