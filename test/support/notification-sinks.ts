/**
 * Real receivers for notification tests: an SMTP server (smtp-server) that keeps every message it accepts,
 * and an HTTP server standing in for chat incoming webhooks, which can answer 503 while "down".
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedEmail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  messageId: string;
  /** The sender's `X-Gateway-Delivery-Id` header ('' without one). */
  deliveryId: string;
}

/** Decodes a quoted-printable body (nodemailer uses it for long lines). */
function decodeQuotedPrintable(body: string): string {
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parseMessage(raw: string, envelope: { from: string; to: string[] }): ReceivedEmail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const text = /quoted-printable/i.test(header('Content-Transfer-Encoding')) ? decodeQuotedPrintable(body)
    : /base64/i.test(header('Content-Transfer-Encoding')) ? Buffer.from(body, 'base64').toString('utf8') : body;
  return { from: envelope.from, to: envelope.to, subject: header('Subject'), text, messageId: header('Message-ID'), deliveryId: header('X-Gateway-Delivery-Id') };
}

export class SmtpSink {
  readonly messages: ReceivedEmail[] = [];
  private server: SMTPServer | null = null;

  /** `delayMs`: how long the server takes to accept each message (a slow relay). */
  constructor(readonly port: number, private readonly opts: { delayMs?: number } = {}) {}

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = new SMTPServer({
      // Plain SMTP on loopback, no login: what a local relay offers.
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => setTimeout(() => {
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          this.messages.push(parseMessage(Buffer.concat(chunks).toString('latin1'), { from, to: session.envelope.rcptTo.map((r) => r.address) }));
          callback();
        }, this.opts.delayMs ?? 0));
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export interface WebhookCall {
  path: string;
  status: number;
  body: any;
  headers: http.IncomingHttpHeaders;
}

export class WebhookSink {
  readonly calls: WebhookCall[] = [];
  /** Paths that answer 503 Service Unavailable. */
  readonly down = new Set<string>();
  /** Paths that take this long (ms) to answer (a slow receiver); the call is recorded when it arrives. */
  readonly slow = new Map<string, number>();
  private server: http.Server | null = null;
  url = '';

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const status = req.method !== 'POST' ? 405 : this.down.has(path) ? 503 : 200;
        let body: unknown = null;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = Buffer.concat(chunks).toString('utf8');
        }
        this.calls.push({ path, status, body, headers: req.headers });
        const answer = () => { if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'service_unavailable'); };
        const delay = this.slow.get(path);
        if (delay) setTimeout(answer, delay);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  delivered(path: string): WebhookCall[] {
    return this.calls.filter((c) => c.path === path && c.status === 200);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
