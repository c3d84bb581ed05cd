/**
 * Streaming multipart/form-data reading (busboy). Nothing is buffered whole: each file part is handed to
 * the caller's `onFile` as a stream (typically piped into object storage) while the form is still
 * arriving. Limits are enforced as the bytes flow:
 * - a declared Content-Length over `requestBytes` is refused (413) before a byte is read;
 * - a body without a declared length is cut off (413) as soon as it passes `requestBytes`;
 * - a file is cut off (413) as soon as it passes its per-field limit.
 * On any failure nothing more is parsed or stored: in-flight file streams end with the error, `discard`
 * receives whatever `onFile` already produced so the caller can delete it, and the rest of the body is
 * dropped unparsed (up to DRAIN_LIMIT_BYTES, so the client gets to read the answer; beyond that the
 * connection is closed).
 *
 * Generic on purpose: field names ending in `[]` (how OpenAI's clients send arrays) are collected under
 * the bare name, and repeated names become arrays.
 */
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { GatewayError, InternalError, InvalidRequestError, PayloadTooLargeError } from '../../core/errors';
import { hasNul } from '../../core/input-limits';
import { dropRestOfBody, requestTooLarge } from './body';

export interface MultipartLimits {
  /** The whole request body, in bytes. */
  requestBytes: number;
  /** One file, in bytes: a number for every field, or per (normalized) field name. */
  fileBytes: number | ((field: string) => number);
  /** Most file parts (default 20). */
  files?: number;
  /** Most non-file fields (default 100). */
  fields?: number;
  /** Longest non-file field value, in bytes (default 1 MiB). */
  fieldBytes?: number;
}

export interface IncomingFile {
  /** Field name without a trailing `[]`. */
  field: string;
  filename: string;
  mimeType: string;
  /** 0-based position among the form's files. */
  index: number;
  /** The part's bytes; errors with a 413 once it passes its limit (consume it, or the form stalls). */
  stream: Readable;
}

export interface ReceivedFile<T> {
  field: string;
  filename: string;
  mimeType: string;
  value: T;
}

export interface ParsedMultipart<T> {
  fields: Record<string, string | string[]>;
  files: Array<ReceivedFile<T>>;
}

export interface ReadMultipartOptions<T> {
  limits: MultipartLimits;
  onFile(file: IncomingFile): Promise<T>;
  /** Undo what `onFile` produced when the form as a whole fails. */
  discard?(values: T[]): Promise<void>;
}

export function fileTooLarge(field: string, limitBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The file in '${field}' is too large: the limit is ${limitBytes} bytes.`, { code: 'file_too_large', param: field });
}

export function isMultipart(contentType: string | undefined): boolean {
  return /^multipart\/form-data\b/i.test(contentType ?? '');
}

export function readMultipart<T>(req: IncomingMessage, opts: ReadMultipartOptions<T>): Promise<ParsedMultipart<T>> {
  const { limits } = opts;
  if (!isMultipart(req.headers['content-type'])) {
    dropRestOfBody(req);
    return Promise.reject(new InvalidRequestError(`Expected a multipart/form-data body, got '${req.headers['content-type'] ?? 'none'}'.`, { code: 'invalid_content_type' }));
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limits.requestBytes) {
    // Refused before a byte is parsed; the answer goes out at once while the body is dropped.
    dropRestOfBody(req);
    return Promise.reject(requestTooLarge(limits.requestBytes));
  }

  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // File names as clients send them today (UTF-8), not busboy's latin1 default.
        defParamCharset: 'utf8',
        limits: { files: limits.files ?? 20, fields: limits.fields ?? 100, fieldSize: limits.fieldBytes ?? 1024 * 1024 },
      });
    } catch (err) {
      reject(new InvalidRequestError(`Malformed multipart/form-data request: ${(err as Error).message}.`, { code: 'invalid_multipart' }));
      return;
    }

    const fields: Record<string, string | string[]> = {};
    const files: Array<Promise<ReceivedFile<T>>> = [];
    const open = new Set<Readable>();
    let failure: GatewayError | null = null;
    let received = 0;
    let fileIndex = 0;

    const countBytes = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.requestBytes) fail(requestTooLarge(limits.requestBytes));
    };
    const clientGone = () => fail(new InvalidRequestError('The client closed the connection before the upload finished.', { code: 'upload_incomplete' }));

    let done = false;
    const stopListening = () => {
      req.off('data', countBytes);
      req.off('aborted', clientGone);
      req.off('error', clientGone);
    };

    function fail(err: GatewayError): void {
      if (failure || done) return;
      failure = err;
      // Nothing more is parsed or stored; the rest of the body is dropped.
      stopListening();
      req.unpipe(parser);
      dropRestOfBody(req);
      for (const stream of open) stream.destroy(err);
      void Promise.allSettled(files).then(async (settled) => {
        const produced = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.value] : []));
        if (produced.length > 0 && opts.discard) await opts.discard(produced).catch(() => undefined);
        reject(err);
      });
    }

    parser.on('field', (rawName, value, info) => {
      if (failure) return;
      const name = fieldName(rawName);
      if (info.valueTruncated) {
        fail(new InvalidRequestError(`The field '${name}' is too long: at most ${limits.fieldBytes ?? 1024 * 1024} bytes.`, { param: name, code: 'field_too_long' }));
        return;
      }
      if (hasNul(value)) {
        fail(new InvalidRequestError(`The field '${name}' holds a NUL character; it is not accepted.`, { param: name, code: 'invalid_characters' }));
        return;
      }
      const existing = fields[name];
      if (existing === undefined) fields[name] = rawName.endsWith('[]') ? [value] : value;
      else fields[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
    });

    parser.on('file', (rawName, stream, info) => {
      if (failure) {
        stream.resume();
        return;
      }
      const field = fieldName(rawName);
      const limit = typeof limits.fileBytes === 'function' ? limits.fileBytes(field) : limits.fileBytes;
      let size = 0;
      const guarded = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          if (size > limit) done(fileTooLarge(field, limit));
          else done(null, chunk);
        },
      });
      open.add(guarded);
      guarded.on('error', (err) => fail(err instanceof PayloadTooLargeError ? err : fileTooLarge(field, limit)));
      guarded.on('close', () => open.delete(guarded));
      stream.on('error', (err) => guarded.destroy(err));
      stream.pipe(guarded);
      const meta = { field, filename: info.filename ?? field, mimeType: info.mimeType || 'application/octet-stream' };
      const produced = opts.onFile({ ...meta, index: fileIndex++, stream: guarded }).then((value) => ({ ...meta, value }));
      produced.catch((err) => fail(asGatewayError(err)));
      files.push(produced);
    });

    parser.on('filesLimit', () => fail(new InvalidRequestError(`Too many files: at most ${limits.files ?? 20} per request.`, { code: 'too_many_files' })));
    parser.on('fieldsLimit', () => fail(new InvalidRequestError(`Too many form fields: at most ${limits.fields ?? 100}.`, { code: 'too_many_fields' })));
    parser.on('error', (err: Error) => fail(new InvalidRequestError(`Malformed multipart/form-data request: ${err.message}.`, { code: 'invalid_multipart' })));
    parser.on('close', () => {
      void Promise.allSettled(files).then((settled) => {
        if (failure) return;
        done = true;
        stopListening();
        resolve({ fields, files: settled.map((s) => (s as PromiseFulfilledResult<ReceivedFile<T>>).value) });
      });
    });

    req.on('data', countBytes);
    req.once('aborted', clientGone);
    req.once('error', clientGone);
    req.pipe(parser);
  });
}

function fieldName(raw: string): string {
  return raw.endsWith('[]') ? raw.slice(0, -2) : raw;
}

/** The caller's own refusals pass through; anything else (storage down) is ours, not the client's. */
function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new InternalError(`The upload could not be stored: ${err instanceof Error ? err.message : String(err)}`);
}
