/**
 * A small closed-loop load generator: `concurrency` workers each send the next request as soon as the
 * previous one ends, over keep-alive connections. Records each request's latency (and, for streams, the
 * time to the first content chunk) in milliseconds.
 */
import http from 'node:http';

export interface LoopOptions {
  concurrency: number;
  /** Stop after this many iterations, or after `durationMs`, whichever comes first. */
  requests?: number;
  durationMs?: number;
  /** How long each loop waits after a request before its next one (0: at once). */
  pauseMs?: number;
}

/** Runs `one` in `concurrency` closed loops; resolves with the elapsed milliseconds. */
export async function closedLoop(opts: LoopOptions, one: () => Promise<void>): Promise<number> {
  const started = performance.now();
  // A phase of 0 ms sends nothing; with neither bound the loop would never end.
  if (opts.durationMs === undefined && opts.requests === undefined) throw new Error('closedLoop needs requests or durationMs');
  const deadline = opts.durationMs !== undefined ? started + opts.durationMs : Infinity;
  const limit = opts.requests ?? Infinity;
  let issued = 0;
  const worker = async () => {
    while (issued < limit && performance.now() < deadline) {
      issued++;
      await one();
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return performance.now() - started;
}

export interface LoadOptions extends LoopOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Measure the time to the first SSE event with non-empty `"content"`. */
  firstChunk?: boolean;
  /** Behave like an official client: after a 429/503 with Retry-After, wait that long before the next request. */
  honorRetryAfter?: boolean;
}

export interface LoadResult {
  latencies: number[];
  firstChunk: number[];
  /** Latencies of the answers that were not 200 (e.g. 503s under overload). */
  refusedLatencies: number[];
  errors: number;
  statuses: Record<number, number>;
  /** The answers' `Server-Timing` phases (name -> durations in ms), where the server sends them. */
  serverTiming: Record<string, number[]>;
  elapsedMs: number;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const target = new URL(opts.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const result: LoadResult = { latencies: [], firstChunk: [], refusedLatencies: [], errors: 0, statuses: {}, serverTiming: {}, elapsedMs: 0 };

  const one = () => new Promise<void>((resolve) => {
    const t0 = performance.now();
    let first = 0;
    let partial = '';
    const req = http.request({
      host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body), ...opts.headers },
    }, (res) => {
      res.on('data', (chunk: Buffer) => {
        if (!opts.firstChunk || first) return;
        // Whole SSE events only (several may arrive in one read): the first with non-empty content.
        const events = (partial + chunk.toString('utf8')).split('\n\n');
        partial = events.pop() ?? '';
        if (events.some((event) => /"content":\s*"[^"]/.test(event))) first = performance.now();
      });
      res.on('end', () => {
        const t1 = performance.now();
        result.statuses[res.statusCode ?? 0] = (result.statuses[res.statusCode ?? 0] ?? 0) + 1;
        if (res.statusCode === 200) {
          result.latencies.push(t1 - t0);
          for (const [name, ms] of serverTimingPhases([res.headers['server-timing'] ?? []].flat().join(', '))) (result.serverTiming[name] ??= []).push(ms);
          if (opts.firstChunk) result.firstChunk.push((first || t1) - t0);
          resolve();
          return;
        }
        result.errors++;
        result.refusedLatencies.push(t1 - t0);
        const retryAfter = Number(res.headers['retry-after']);
        if (opts.honorRetryAfter && retryAfter > 0) setTimeout(resolve, retryAfter * 1000);
        else resolve();
      });
    });
    req.on('error', () => { result.errors++; resolve(); });
    req.end(opts.body);
  });

  result.elapsedMs = await closedLoop(opts, one);
  agent.destroy();
  return result;
}

/** `Server-Timing: admission;dur=2.9, start;dur=5.1` as [name, ms] pairs (entries without a duration skipped). */
export function serverTimingPhases(header: string | undefined): Array<[string, number]> {
  if (!header) return [];
  return header.split(',').flatMap((entry) => {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => /^\s*dur=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
    return name && dur ? [[name, Number(dur)] as [string, number]] : [];
  });
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
