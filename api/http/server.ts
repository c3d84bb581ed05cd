/**
 * Owns the listening socket: start, and the graceful shutdown that lets in-flight requests finish.
 *
 * `drain` is the API's half of a process shutdown (main/process-lifecycle.ts): from its first moment /readyz
 * answers 503 and every new request 503 `server_shutting_down` with `Connection: close` (api/http/drain.ts);
 * the requests and streams already running go on until they end or the grace period ends. Then streams are
 * cut (each writes an error event and bills what was generated: activities/stream-chat.ts), and an answer
 * still awaited gets 504 `outcome_unknown` (its run goes on and is charged at most once); then the socket closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { ServiceUnavailableError } from '../../core/errors';
import { errorBody } from './errors';

export interface HttpServerHandle {
  server: http.Server;
  url: string;
  /** Requests being answered now (a stream until its last byte). */
  readonly inFlight: number;
  /** Stops taking requests; lets those in flight end within `graceMs`, then `cutStreams` and answers the rest; closes. */
  drain(opts: { graceMs: number; cutStreams(): void }): Promise<void>;
  close(graceMs?: number): Promise<void>;
}

/** How long cut streams get to write their error event and settle before their connections are closed. */
const CUT_SETTLE_MS = 10_000;

export async function startHttpServer(app: Koa<any, any>, opts: { host: string; port: number }): Promise<HttpServerHandle> {
  const handle = app.callback();
  const open = new Map<http.ServerResponse, string>();
  // Koa's handler settles every request itself (failures go to ctx.onerror), so its promise never rejects.
  const server = http.createServer((req, res) => {
    open.set(res, req.url ?? '');
    res.once('close', () => open.delete(res));
    void handle(req, res);
  });
  // Long generations (images, audio, slow upstreams) outlive Node's default request timeout.
  server.requestTimeout = 15 * 60_000;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => { server.off('error', reject); resolve(); });
  });
  const { port } = server.address() as AddressInfo;
  const closeSocket = (forceAfterMs: number) => new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), forceAfterMs);
    server.close(() => { clearTimeout(force); resolve(); });
    server.closeIdleConnections();
  });
  const settled = async (deadline: number) => {
    while (open.size > 0 && Date.now() < deadline) {
      // Kept-alive connections of answered requests go now (their clients open new ones elsewhere).
      server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  let draining: Promise<void> | null = null;
  return {
    server,
    url: `http://${opts.host}:${port}`,
    get inFlight() {
      return open.size;
    },
    drain({ graceMs, cutStreams }) {
      draining ??= (async () => {
        await settled(Date.now() + graceMs);
        if (open.size > 0) {
          cutStreams();
          // Answers not begun are given now; begun streams get a moment to write their error event and settle.
          for (const [res, url] of open) if (!res.headersSent) answerCut(res, url);
          await settled(Date.now() + CUT_SETTLE_MS);
          for (const [res, url] of open) answerCut(res, url);
        }
        await closeSocket(1_000);
      })();
      return draining;
    },
    close: (graceMs = 10_000) => closeSocket(graceMs),
  };
}

/** A request still running at the end of the grace period: its answer, if none was begun, else the end of its stream. */
function answerCut(res: http.ServerResponse, url: string): void {
  if (res.writableEnded) return;
  const requestId = res.getHeader('x-request-id');
  const where = typeof requestId === 'string' && url.startsWith('/v1/')
    ? ` GET /v1/requests/${requestId} shows its outcome and charge once it ends.`
    : '';
  const err = new ServiceUnavailableError(
    `The server shut down before this request finished. It may still finish elsewhere, and is charged at most once; do not send it again as a new request.${where}`,
    { code: 'outcome_unknown', status: 504, retryAfterSeconds: 1 },
  );
  if (!res.headersSent) {
    res.writeHead(err.status, { 'content-type': 'application/json; charset=utf-8', connection: 'close', ...err.headers });
    res.end(JSON.stringify(errorBody(err)));
  } else {
    // A stream that was not cut by its own writer (an image stream): one last error event.
    if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) res.write(`data: ${JSON.stringify(errorBody(err))}\n\n`);
    res.end();
  }
}
