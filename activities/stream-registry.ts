/**
 * Streams cannot travel through workflow history, so the HTTP connection stays in the API process that
 * accepted it: the route parks its response here under the request id, the workflow schedules the stream
 * activity on this process's own task queue, and the activity writes the bytes straight to the socket.
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../core/errors';

export class StreamSink {
  private started = false;
  private closedByClient = false;
  private cutBy: GatewayError | null = null;
  private readonly startWaiters: Array<() => void> = [];
  private readonly closeListeners: Array<() => void> = [];
  private serving: Promise<unknown> | null = null;

  constructor(readonly requestId: string, private readonly res: ServerResponse, private readonly onStart: () => void) {
    res.on('close', () => {
      if (!res.writableFinished) {
        this.closedByClient = true;
        for (const listener of this.closeListeners.splice(0)) listener();
      }
    });
  }

  /**
   * Runs the stream hop that writes to this connection, one at a time: a second runner (an activity retried
   * or moved while the first still runs, or one claiming a hop begun while its run started) joins the one
   * already going and gets its outcome. A hop that failed (before its first byte) leaves the place to a retry.
   */
  serve<T>(hop: () => Promise<T>): Promise<T> {
    if (!this.serving) {
      const running = hop();
      this.serving = running;
      running.catch(() => { if (this.serving === running) this.serving = null; });
    }
    return this.serving as Promise<T>;
  }

  /** True once the client went away before the stream finished, or the server cut the stream (`cut`). */
  get clientGone(): boolean {
    return this.closedByClient || this.cutBy !== null;
  }

  /** Why the server cut this stream short (a shutdown past its grace period), else null. */
  get cutError(): GatewayError | null {
    return this.cutBy;
  }

  /**
   * Ends the stream from the server's side (a shutdown past its grace period): its writer stops as if the client
   * had left, bills what was generated, and writes `error` as the stream's last event.
   */
  cut(error: GatewayError): void {
    if (this.cutBy || this.closedByClient || this.res.writableEnded) return;
    this.cutBy = error;
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  get hasStarted(): boolean {
    return this.started;
  }

  onClientGone(listener: () => void): void {
    if (this.clientGone) listener();
    else this.closeListeners.push(listener);
  }

  /** Resolves when the first byte was written (the HTTP status is then committed). */
  whenStarted(): Promise<void> {
    return this.started ? Promise.resolve() : new Promise((resolve) => this.startWaiters.push(resolve));
  }

  /** Commits a 200 event-stream with the given headers; later errors can only be stream events. */
  start(headers: Record<string, string>): void {
    if (this.started || this.res.headersSent || this.res.writableEnded) return;
    this.started = true;
    this.onStart();
    for (const [name, value] of Object.entries(headers)) this.res.setHeader(name, value);
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // The headers go out with the events written in this same turn (the opening ones and the first part),
    // in one write instead of one per piece: each is a system call and a packet on the time to first token.
    this.res.cork();
    process.nextTick(() => this.res.uncork());
    for (const waiter of this.startWaiters.splice(0)) waiter();
  }

  /** Writes one SSE event (`data: <json>`, after `event: <name>` when named). Returns false when the client is gone. */
  send(data: unknown, event?: string): boolean {
    if (this.closedByClient || this.res.writableEnded || !this.started) return false;
    this.res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    return true;
  }

  /** Writes an SSE comment line (clients ignore it; it keeps proxies from closing an idle stream). */
  comment(text: string): boolean {
    if (this.closedByClient || this.res.writableEnded || !this.started) return false;
    this.res.write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
    return true;
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}

export class StreamRegistry {
  private readonly sinks = new Map<string, StreamSink>();

  open(requestId: string, res: ServerResponse, onStart: () => void): StreamSink {
    const sink = new StreamSink(requestId, res, onStart);
    this.sinks.set(requestId, sink);
    return sink;
  }

  get(requestId: string): StreamSink | undefined {
    return this.sinks.get(requestId);
  }

  close(requestId: string): void {
    this.sinks.delete(requestId);
  }

  get size(): number {
    return this.sinks.size;
  }

  /** Cuts every stream this process holds (a shutdown past its grace period). */
  cutAll(error: GatewayError): number {
    for (const sink of this.sinks.values()) sink.cut(error);
    return this.sinks.size;
  }
}
