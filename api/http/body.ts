/**
 * Request bodies. JSON is read with a hard size limit: a declared Content-Length over the limit is refused
 * before a byte is kept, and a body without one (chunked) is refused (413) as soon as it passes the limit.
 * Either way the rest is read and dropped BEFORE the answer goes out: Node stops reading a request once its
 * response is sent, so a client still sending would otherwise meet a reset connection instead of the 413.
 * The text is then checked (nesting depth, NUL characters: core/input-limits.ts) before it is parsed, so
 * nothing downstream hashes, stores or serialises a body that would break it.
 */
import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { InvalidRequestError, PayloadTooLargeError } from '../../core/errors';
import { checkJsonText } from '../../core/input-limits';

/** What is read and dropped after a refused upload before the connection is closed instead. */
export const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<Record<string, unknown>> {
  const type = ctx.get('content-type');
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new InvalidRequestError(`Expected a JSON body (Content-Type: application/json), got '${type || 'none'}'.`, { code: 'invalid_content_type' });
  }
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limitBytes) {
    await drainBody(ctx.req);
    throw requestTooLarge(limitBytes);
  }
  const text = (await readLimited(ctx.req, limitBytes)).toString('utf8');
  checkJsonText(text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InvalidRequestError('We could not parse the JSON body of your request. Send valid JSON.', { code: 'invalid_json' });
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object.', { code: 'invalid_json' });
  }
  return body as Record<string, unknown>;
}

/** The body's bytes as sent (a webhook's signature covers them exactly), with the same size limit. */
export async function readRawBody(ctx: Koa.Context, limitBytes: number): Promise<Buffer> {
  if (Number(ctx.get('content-length') || NaN) > limitBytes) {
    await drainBody(ctx.req);
    throw requestTooLarge(limitBytes);
  }
  return readLimited(ctx.req, limitBytes);
}

/** The whole body, or a 413 once it passes `limitBytes` (the rest is then dropped, not left to reset the connection). */
function readLimited(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      chunks.length = 0;
      void drainBody(req).then(() => reject(requestTooLarge(limitBytes)));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = () => {
      stop();
      reject(new InvalidRequestError('The client closed the connection before the body was complete.', { code: 'upload_incomplete' }));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('aborted', onError);
  });
}

export function requestTooLarge(limitBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`Request body too large: the limit is ${limitBytes} bytes.`, { code: 'request_too_large' });
}

/**
 * Reads and drops the rest of a refused body, settling once the client sent it all (or went away), so the
 * answer that follows is read. Nothing is kept; the server's request timeout bounds how long it may take.
 */
export function drainBody(req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      for (const event of ['end', 'close', 'error', 'aborted']) req.off(event, done);
      resolve();
    };
    for (const event of ['end', 'close', 'error', 'aborted']) req.once(event, done);
    req.on('data', () => undefined);
    req.resume();
  });
}

/**
 * Drops what the client is still sending so it can read our (error) answer rather than a reset
 * connection; past `limitBytes` (default DRAIN_LIMIT_BYTES) the socket is destroyed instead.
 */
export function dropRestOfBody(req: IncomingMessage, limitBytes = DRAIN_LIMIT_BYTES): void {
  if (req.complete || req.destroyed) return;
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > limitBytes) req.socket.destroy();
  });
  req.resume();
}
