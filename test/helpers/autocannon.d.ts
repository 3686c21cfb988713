// The parts of autocannon's programmatic API the load tests use (the package ships no types).
declare module 'autocannon' {
  namespace autocannon {
    interface RequestData {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }
    interface Request extends RequestData {
      /** Builds the request each time it is sent; `context` lives for one pass over `requests`. */
      setupRequest?: (request: RequestData, context: any) => RequestData | null;
      onResponse?: (status: number, body: string, context: any, headers?: Record<string, string>) => void;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      /** Seconds. */
      timeout?: number;
      requests?: Request[];
    }
    interface Histogram {
      average: number;
      mean: number;
      max: number;
      min: number;
      p50: number;
      p90: number;
      p99: number;
    }
    interface Result {
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      mismatches: number;
      duration: number;
      latency: Histogram;
      requests: Histogram & { total: number; sent: number };
      '2xx': number;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}
