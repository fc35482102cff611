// autocannon ships no types: just the part of its programmatic API the bench uses.
declare module 'autocannon' {
  type Request = { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer };
  type Options = {
    url: string;
    connections?: number;
    duration?: number;
    /** Stop after this many requests (instead of after `duration`). */
    amount?: number;
    timeout?: number;
    warmup?: { connections?: number; duration?: number };
    requests?: (Request & { setupRequest?: (req: Request, context: object) => Request })[];
  };
  type Histogram = { average: number; mean: number; p50: number; p90: number; p99: number; max: number; total: number };
  export type Result = {
    requests: Histogram;
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    warmup?: Result;
  };
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
