/**
 * A small closed-loop load generator: `concurrency` workers each send the next request as soon as the
 * previous one ends, over keep-alive connections. Records each request's latency (and, for streams, the
 * time to the first content chunk) in milliseconds.
 */
import http from 'node:http';

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  concurrency: number;
  /** Stop after this many requests, or after `durationMs`, whichever comes first. */
  requests?: number;
  durationMs?: number;
  /** Measure the time to the first `"content"` chunk of an SSE answer. */
  firstChunk?: boolean;
}

export interface LoadResult {
  latencies: number[];
  firstChunk: number[];
  errors: number;
  statuses: Record<number, number>;
  elapsedMs: number;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const target = new URL(opts.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const result: LoadResult = { latencies: [], firstChunk: [], errors: 0, statuses: {}, elapsedMs: 0 };
  const started = performance.now();
  const deadline = opts.durationMs ? started + opts.durationMs : Infinity;
  let issued = 0;
  const limit = opts.requests ?? Infinity;

  const one = () => new Promise<void>((resolve) => {
    const t0 = performance.now();
    let first = 0;
    const req = http.request({
      host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body), ...opts.headers },
    }, (res) => {
      res.on('data', (chunk: Buffer) => {
        if (opts.firstChunk && !first && chunk.includes('"content":"') && !chunk.includes('"content":""}')) first = performance.now();
      });
      res.on('end', () => {
        const t1 = performance.now();
        result.statuses[res.statusCode ?? 0] = (result.statuses[res.statusCode ?? 0] ?? 0) + 1;
        if (res.statusCode === 200) {
          result.latencies.push(t1 - t0);
          if (opts.firstChunk) result.firstChunk.push((first || t1) - t0);
        } else {
          result.errors++;
        }
        resolve();
      });
    });
    req.on('error', () => { result.errors++; resolve(); });
    req.end(opts.body);
  });

  const worker = async () => {
    while (issued < limit && performance.now() < deadline) {
      issued++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  result.elapsedMs = performance.now() - started;
  agent.destroy();
  return result;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
