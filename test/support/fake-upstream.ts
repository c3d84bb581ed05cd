/**
 * A fake upstream provider: a real HTTP server on 127.0.0.1 that answers routes with recorded-shape
 * fixtures and records every request it received, so tests can assert exactly what the gateway sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  /** The body parsed as JSON when it is JSON, else undefined. */
  json: any;
  /** The client's port: requests on one kept-alive connection share it. */
  remotePort: number | undefined;
}

export type FakeReply =
  | { status?: number; headers?: Record<string, string>; json: unknown }
  | { status?: number; headers?: Record<string, string>; body: string | Buffer }
  /** Server-sent events: each item is written as `data: <item>\n\n` (objects are JSON-encoded). */
  | { status?: number; headers?: Record<string, string>; sse: Array<unknown | { event: string; data: unknown }>; delayMs?: number; endWith?: string }
  /** Never answers (until the client gives up), to exercise timeouts. */
  | { hang: true }
  /** Accepts the request, then destroys the socket: a connection reset. */
  | { reset: true };

export type FakeHandler = (req: RecordedRequest, callIndex: number) => FakeReply | Promise<FakeReply>;

export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  /** Streams whose client went away before the last event was written (cancelled upstream calls). */
  abortedStreams = 0;
  private readonly routes = new Map<string, { handler: FakeHandler; calls: number }>();
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();

  /** Registers a handler for `METHOD /path` (exact path; `*` at the end matches any suffix). */
  on(route: string, handler: FakeHandler | FakeReply): this {
    this.routes.set(route, { handler: typeof handler === 'function' ? handler : () => handler, calls: 0 });
    return this;
  }

  /** Answers each call of the route with the next reply in turn; the last one repeats. */
  sequence(route: string, replies: FakeReply[]): this {
    return this.on(route, (_req, i) => replies[Math.min(i, replies.length - 1)]);
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this.url;
  }

  get url(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Requests received on one route (`METHOD /path`). */
  received(route: string): RecordedRequest[] {
    const [method, path] = route.split(' ');
    return this.requests.filter((r) => r.method === method && matches(path, r.path));
  }

  reset(): void {
    this.requests.length = 0;
    this.routes.clear();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    let json: unknown;
    if ((req.headers['content-type'] ?? '').includes('json')) {
      try { json = JSON.parse(raw.toString('utf8')); } catch { json = undefined; }
    }
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, raw, json, remotePort: req.socket.remotePort };
    this.requests.push(recorded);

    const route = this.findRoute(recorded.method, recorded.path);
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no fake route for ${recorded.method} ${recorded.path}` } }));
      return;
    }
    const reply = await route.handler(recorded, route.calls++);
    if ('hang' in reply) return;
    if ('reset' in reply) {
      req.socket.destroy();
      return;
    }
    const status = reply.status ?? 200;
    if ('sse' in reply) {
      res.writeHead(status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...(reply.headers ?? {}) });
      for (const item of reply.sse) {
        if (res.destroyed) {
          this.abortedStreams++;
          return;
        }
        if (item && typeof item === 'object' && 'event' in item && 'data' in item) {
          const { event, data } = item as { event: string; data: unknown };
          res.write(`event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
        } else {
          res.write(`data: ${typeof item === 'string' ? item : JSON.stringify(item)}\n\n`);
        }
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      }
      if (reply.endWith !== undefined) res.write(reply.endWith);
      res.end();
      return;
    }
    if ('json' in reply) {
      res.writeHead(status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
      res.end(JSON.stringify(reply.json));
      return;
    }
    res.writeHead(status, reply.headers ?? {});
    res.end(reply.body);
  }

  private findRoute(method: string, path: string) {
    for (const [key, route] of this.routes) {
      const [m, p] = key.split(' ');
      if (m === method && matches(p, path)) return route;
    }
    return undefined;
  }
}

function matches(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}
