/**
 * Operators' metrics in Prometheus text format: one registry per gateway process (requests, latency,
 * credits, fallbacks, upstream errors, in-flight model requests, the Node process), with the Temporal SDK
 * core's own metrics appended when the core serves them (see infra/temporal.ts).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpstreamError } from '../core/errors';
import { liveness, type ProbeAnswer } from './probes';

export interface RequestObservation {
  /** The matched route (`/v1/chat/completions`), never the raw path (unbounded label values). */
  endpoint: string;
  method: string;
  status: number;
  seconds: number;
  /** The x-fallback-depth the API answered with (absent when the first model served). */
  fallbackDepth?: number;
}

let processMetrics: Registry | null = null;

/** The Node process's own metrics, collected once per process however many gateways it runs (tests run many). */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'gateway_http_requests_total', help: 'HTTP requests answered, by matched route, method and status.',
    labelNames: ['endpoint', 'method', 'status'] as const, registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'gateway_http_request_duration_seconds', help: 'Time to answer an HTTP request (a stream: until its end), by matched route.',
    labelNames: ['endpoint'] as const, registers: [this.registry],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  });
  private readonly credits = new Counter({
    name: 'gateway_credits_charged_total', help: 'Credits charged, counted once per settled request (plain, streamed, image streams, video jobs) in the process that settled it, by endpoint and model.',
    labelNames: ['endpoint', 'model'] as const, registers: [this.registry],
  });
  private readonly fallbacks = new Counter({
    name: 'gateway_fallback_responses_total', help: 'Requests served by a fallback model, by route and depth in the chain.',
    labelNames: ['endpoint', 'depth'] as const, registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: 'gateway_upstream_errors_total', help: 'Failed upstream calls (every attempt, retried or not), by provider, model and kind.',
    labelNames: ['provider', 'model', 'kind'] as const, registers: [this.registry],
  });
  readonly inFlight = new Gauge({
    name: 'gateway_in_flight_requests', help: 'Model requests this process is serving now (what admission control counts).',
    registers: [this.registry],
  });
  readonly rejected = new Counter({
    name: 'gateway_admission_rejected_total', help: 'Model requests answered 503 server_overloaded because the in-flight bound was reached.',
    registers: [this.registry],
  });

  /** `temporalUrl`: the Temporal SDK core's Prometheus endpoint, appended to this process's text. */
  constructor(private readonly temporalUrl: string | null = null) {}

  observeRequest(o: RequestObservation): void {
    this.requests.inc({ endpoint: o.endpoint, method: o.method, status: String(o.status) });
    this.latency.observe({ endpoint: o.endpoint }, o.seconds);
    if (o.fallbackDepth && o.fallbackDepth > 0) this.fallbacks.inc({ endpoint: o.endpoint, depth: String(o.fallbackDepth) });
  }

  /** A settled charge (domain/request-accounting.ts announces each reservation's first settlement once). */
  observeCharge(o: { endpoint: string; model: string | null; credits: number }): void {
    if (o.credits > 0) this.credits.inc({ endpoint: o.endpoint, model: o.model ?? 'unknown' }, o.credits);
  }

  /**
   * The activity boundary's observer (activities/failure-policy.ts): every failed upstream call, counted by
   * the provider the error names and the model in the activity's input.
   */
  readonly activityObserver = {
    failed: (_activity: string, input: unknown, err: unknown): void => {
      if (!(err instanceof UpstreamError)) return;
      const model = (input as { model?: unknown } | null)?.model;
      this.upstreamErrors.inc({ provider: err.provider, model: typeof model === 'string' ? model : 'unknown', kind: err.kind });
    },
  };

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The whole text: ours, then the Temporal SDK's (left out, with a comment, if its endpoint does not answer). */
  async render(): Promise<string> {
    const own = `${await this.registry.metrics()}\n${await processRegistry().metrics()}`;
    if (!this.temporalUrl) return own;
    try {
      const response = await fetch(this.temporalUrl, { signal: AbortSignal.timeout(2000) });
      if (!response.ok) throw new Error(`status ${response.status}`);
      return `${own}\n${await response.text()}`;
    } catch (err) {
      return `${own}\n# Temporal SDK metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`;
    }
  }
}

/** Whether an `Authorization` header carries the operator token (always, when no token is configured). */
export function operatorAuthorized(authorization: string | undefined, token: string | null | undefined): boolean {
  if (!token) return true;
  const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The HTTP endpoints of a process without the API: `/livez` and `/readyz` (infra/probes.ts) and, with metrics on,
 * `/metrics` (the operator token required, as on the API).
 */
export async function serveWorkerEndpoints(opts: {
  metrics: GatewayMetrics | null; readiness: () => Promise<ProbeAnswer>; host: string; port: number; operatorToken?: string | null;
}): Promise<{ url: string; close(): Promise<void> }> {
  const json = (res: http.ServerResponse, answer: ProbeAnswer) => res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(answer.body));
  const server = http.createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (req.method === 'GET' && path === '/livez') return void json(res, liveness());
    if (req.method === 'GET' && path === '/readyz') {
      return void opts.readiness().then((answer) => json(res, answer), () => res.writeHead(503).end());
    }
    const { metrics } = opts;
    if (req.method !== 'GET' || path !== '/metrics' || !metrics) {
      res.writeHead(404).end();
      return;
    }
    if (!operatorAuthorized(req.headers.authorization, opts.operatorToken)) {
      res.writeHead(401).end();
      return;
    }
    void metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => { server.off('error', reject); resolve(); });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host}:${port}`,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
