/** Owns the listening socket: start, and graceful shutdown that lets in-flight requests finish. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface HttpServerHandle {
  server: http.Server;
  url: string;
  close(graceMs?: number): Promise<void>;
}

export async function startHttpServer(app: Koa<any, any>, opts: { host: string; port: number }): Promise<HttpServerHandle> {
  const handle = app.callback();
  // Koa's handler settles every request itself (failures go to ctx.onerror), so its promise never rejects.
  const server = http.createServer((req, res) => { void handle(req, res); });
  // Long generations (images, audio, slow upstreams) outlive Node's default request timeout.
  server.requestTimeout = 15 * 60_000;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => { server.off('error', reject); resolve(); });
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${opts.host}:${port}`,
    close: (graceMs = 10_000) => new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      server.close(() => { clearTimeout(force); resolve(); });
      server.closeIdleConnections();
    }),
  };
}
