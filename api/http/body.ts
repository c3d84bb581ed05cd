/**
 * JSON body reading with a hard size limit: a declared Content-Length over the limit is refused before a
 * byte is read, and a chunked body is cut off (413) as soon as it passes the limit.
 */
import type Koa from 'koa';
import { InvalidRequestError, PayloadTooLargeError } from '../../core/errors';

export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<Record<string, unknown>> {
  const type = ctx.get('content-type');
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new InvalidRequestError(`Expected a JSON body (Content-Type: application/json), got '${type || 'none'}'.`, { code: 'invalid_content_type' });
  }
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limitBytes) throw tooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) {
      ctx.req.destroy();
      throw tooLarge(limitBytes);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
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

function tooLarge(limitBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`Request body too large: the limit is ${limitBytes} bytes.`, { code: 'request_too_large' });
}
