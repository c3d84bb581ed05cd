/**
 * Reads one `multipart/form-data` upload (a `file` part and a `purpose` field, in either order) with busboy
 * and hands the file's bytes to a sink as they arrive: never the whole file in memory. Bytes and sha256 are
 * computed on the way, and the running size is enforced (the sink sees an error as soon as the file passes
 * `maxBytes`). The promise settles only after the sink settled, so the caller knows whether anything may
 * have been stored.
 */
import busboy from 'busboy';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { GatewayError, InvalidRequestError } from '../../core/errors';
import { sanitizeFilename } from '../../core/filenames';
import { mediaTypeForFile } from '../../core/media-types';
import { dropRestOfBody } from '../http/body';
import { hasNul } from '../../core/input-limits';

export interface ReceivedUpload {
  fields: Record<string, string>;
  /** Normalised display name. */
  filename: string;
  contentType: string;
  bytes: number;
  sha256: string;
}

/** Consumes the file's chunks (stores them, or only reads them for a replay's hash). */
export type UploadSink = (chunks: AsyncIterable<Buffer>, contentType: () => string) => Promise<void>;

export interface ReceiveOptions {
  maxBytes: number;
  /** The error for a file over `maxBytes` (413, naming whichever limit applies). */
  tooLarge: () => GatewayError;
  sink: UploadSink;
  /** Checks a form field as soon as it arrives (a bad `purpose` before the file stops the upload early). */
  checkField?: (name: string, value: string) => void;
}

const SNIFF_BYTES = 64;

export function isMultipart(contentType: string | undefined): boolean {
  return /^multipart\/form-data\s*;.*boundary=/i.test(contentType ?? '');
}

export function receiveUpload(req: IncomingMessage, opts: ReceiveOptions): Promise<ReceivedUpload> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: { files: 1, fields: 8, parts: 10, fieldSize: 4096, fieldNameSize: 100, headerPairs: 20 },
    });
  } catch {
    return Promise.reject(new InvalidRequestError('Expected a multipart/form-data body with a boundary.', { code: 'invalid_content_type' }));
  }

  return new Promise<ReceivedUpload>((resolve, reject) => {
    const fields: Record<string, string> = {};
    const hash = createHash('sha256');
    let head = Buffer.alloc(0);
    let bytes = 0;
    let file: { stream: Readable; filename: string; declared: string | null } | null = null;
    let stored: Promise<void> | null = null;
    let settled = false;

    const contentType = () => mediaTypeForFile({ head, declared: file?.declared, filename: file?.filename ?? '' });

    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      file?.stream.destroy();
      dropRestOfBody(req);
      // Storage failures pass through as they are (a 5xx); parser and client faults arrive as gateway errors.
      void Promise.allSettled([stored]).then(() => reject(err));
    };

    async function* metered(stream: Readable): AsyncGenerator<Buffer> {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > opts.maxBytes) throw opts.tooLarge();
        hash.update(chunk);
        if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        yield chunk;
      }
    }

    parser.on('file', (name, stream, info) => {
      if (settled) {
        stream.resume();
        return;
      }
      if (name !== 'file') {
        stream.resume();
        fail(new InvalidRequestError(`Unexpected file field '${name}': send the file in the 'file' field.`, { param: name, code: 'unknown_parameter' }));
        return;
      }
      file = { stream, filename: sanitizeFilename(info.filename), declared: info.mimeType ?? null };
      stored = opts.sink(metered(stream), contentType);
      stored.catch(fail);
    });
    parser.on('field', (name, value, info) => {
      if (settled) return;
      if (info.nameTruncated || info.valueTruncated) {
        fail(new InvalidRequestError(`Form field '${name}' is too long.`, { param: name, code: 'invalid_value' }));
        return;
      }
      if (hasNul(value)) {
        fail(new InvalidRequestError(`Form field '${name}' holds a NUL character; it is not accepted.`, { param: name, code: 'invalid_characters' }));
        return;
      }
      fields[name] = value;
      try {
        opts.checkField?.(name, value);
      } catch (err) {
        fail(err);
      }
    });
    parser.on('filesLimit', () => fail(new InvalidRequestError('Send exactly one file per upload.', { param: 'file', code: 'too_many_files' })));
    parser.on('fieldsLimit', () => fail(new InvalidRequestError('Too many form fields.', { code: 'invalid_multipart' })));
    parser.on('partsLimit', () => fail(new InvalidRequestError('Too many form parts.', { code: 'invalid_multipart' })));
    parser.on('error', () => fail(new InvalidRequestError('The multipart body is malformed or ended early.', { code: 'invalid_multipart' })));
    parser.on('close', () => {
      if (settled) return;
      if (!file || !stored) {
        fail(new InvalidRequestError("Missing required parameter: 'file'.", { param: 'file', code: 'missing_required_parameter' }));
        return;
      }
      const { filename } = file;
      stored.then(() => {
        if (settled) return;
        settled = true;
        resolve({ fields, filename, contentType: contentType(), bytes, sha256: hash.digest('hex') });
      }, fail);
    });
    req.on('close', () => {
      if (!req.complete) fail(new InvalidRequestError('The upload was interrupted before it completed.', { code: 'upload_incomplete' }));
    });
    req.pipe(parser);
  });
}
