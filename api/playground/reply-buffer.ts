/**
 * Where a Playground reply streams to instead of a browser connection: the stream activity writes its
 * chat-completion chunks here (it takes the place of the HTTP response in the stream registry), so the run
 * goes on whatever the tab does. The text so far is kept, and any number of pages (a refreshed one, a
 * second tab) attach to it and get it from the start. Destroying the buffer is "stop": the activity sees
 * its client gone and settles what was generated. The text so far is also handed to `persist` at most once
 * every `persistEveryMs` while it grows, so it outlives this process (the message row keeps it).
 */
import { Writable } from 'node:stream';
import type { ServerResponse } from 'node:http';

type Listener = (event: { delta?: string; done?: boolean }) => void;

export class ReplyBuffer extends Writable {
  text = '';
  error: string | null = null;
  /** The code of the error the stream ended with (null: none, or it had no code). */
  errorCode: string | null = null;
  private pending = '';
  private finished = false;
  private readonly watchers = new Set<Listener>();
  private persistTimer: NodeJS.Timeout | null = null;

  constructor(private readonly persist?: (text: string) => Promise<void>, private readonly persistEveryMs = 1_000) {
    super();
    // After a stop, the stream activity's last write or end meets a destroyed stream: nothing to report.
    this.on('error', () => undefined);
  }

  // The stream sink's calls on a response that have no meaning here.
  setHeader(): void {}
  writeHead(): void {}
  flushHeaders(): void {}

  /** This buffer in the shape the stream registry takes (it uses only the Writable side and the three no-ops above). */
  asResponse(): ServerResponse {
    return this as unknown as ServerResponse;
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.pending += chunk.toString();
    let end: number;
    while ((end = this.pending.indexOf('\n\n')) >= 0) {
      this.readEvent(this.pending.slice(0, end));
      this.pending = this.pending.slice(end + 2);
    }
    done();
  }

  private readEvent(event: string): void {
    const data = event.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    if (!data || data === '[DONE]') return;
    try {
      const parsed = JSON.parse(data);
      if (parsed.error) {
        this.error = String(parsed.error.message ?? 'the model failed');
        this.errorCode = typeof parsed.error.code === 'string' ? parsed.error.code : null;
      }
      const delta = parsed.choices?.[0]?.delta?.content;
      if (typeof delta === 'string' && delta) {
        this.text += delta;
        for (const l of this.watchers) l({ delta });
        this.schedulePersist();
      }
    } catch {
      // not a chunk of ours: nothing to show
    }
  }

  /** Attaches a page: it gets the text so far at once, then every delta, then `done`. Returns the detach. */
  attach(listener: Listener): () => void {
    if (this.text) listener({ delta: this.text });
    if (this.finished) {
      listener({ done: true });
      return () => undefined;
    }
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private schedulePersist(): void {
    if (!this.persist || this.persistTimer || this.finished) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = null;
      // A failed save is retried with the next delta; the run's own outcome writes the final text anyway.
      void this.persist?.(this.text).catch(() => undefined);
    }, this.persistEveryMs);
    this.persistTimer.unref();
  }

  /** The run settled: attached pages are told, and read the stored message from now on. */
  settle(): void {
    if (this.persistTimer) clearTimeout(this.persistTimer);
    this.persistTimer = null;
    this.finished = true;
    for (const l of this.watchers) l({ done: true });
    this.watchers.clear();
  }
}
