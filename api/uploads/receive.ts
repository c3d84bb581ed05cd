/**
 * Media uploads of the model endpoints (image edits, transcriptions). Each file streams from the client
 * straight into object storage under `uploads/<requestId>/`, hashed and with its first bytes kept to
 * recognise it; the request workflow then carries only the storage keys (domain/media/uploads.ts).
 * A request refused before its workflow started leaves no upload behind; once the workflow has closed,
 * its uploads are deleted too (the results live on under `results/`).
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { UPLOAD_HEAD_BYTES, type UploadRef } from '../../domain/uploads';
import type { ObjectStorage } from '../../infra/storage';
import type { AppDeps, GatewayContext } from '../http/context';
import { readMultipart, type MultipartLimits } from '../http/multipart';

/** A stored upload and the first bytes of it, which stay in this process. */
export interface ReceivedUpload {
  field: string;
  ref: UploadRef;
  head: Buffer;
  declaredType: string;
}

export interface UploadForm {
  fields: Record<string, string | string[]>;
  uploads: ReceivedUpload[];
}

/** Multipart form overhead allowed on top of the file limit (boundaries, part headers, text fields). */
export const FORM_OVERHEAD_BYTES = 256 * 1024;
/** Longest text field of a media form (a 32,000-character prompt fits). */
export const FORM_FIELD_BYTES = 192 * 1024;

export async function receiveUploadForm(ctx: GatewayContext, deps: AppDeps, limits: Omit<MultipartLimits, 'requestBytes'> & { requestBytes?: number }): Promise<UploadForm> {
  const { requestId } = ctx.state;
  const form = await readMultipart<ReceivedUpload>(ctx.req, {
    limits: { requestBytes: deps.config.maxUploadBytes + FORM_OVERHEAD_BYTES, fieldBytes: FORM_FIELD_BYTES, ...limits },
    onFile: (file) => storeUpload(deps.storage, `uploads/${requestId}/${file.index}-${safeName(file.field)}`, file),
    discard: (uploads) => deleteUploads(deps.storage, uploads.map((u) => u.ref)),
  });
  return { fields: form.fields, uploads: form.files.map((f) => f.value) };
}

async function storeUpload(storage: ObjectStorage, key: string, file: { field: string; filename: string; mimeType: string; stream: Readable }): Promise<ReceivedUpload> {
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  async function* observed(): AsyncGenerator<Buffer> {
    for await (const chunk of file.stream) {
      const buffer = chunk as Buffer;
      hash.update(buffer);
      if (headBytes < UPLOAD_HEAD_BYTES) {
        head.push(buffer.subarray(0, UPLOAD_HEAD_BYTES - headBytes));
        headBytes += Math.min(buffer.length, UPLOAD_HEAD_BYTES - headBytes);
      }
      yield buffer;
    }
  }
  const { bytes } = await storage.putStream(key, observed(), { contentType: file.mimeType });
  return {
    field: file.field,
    ref: { key, filename: file.filename, mediaType: file.mimeType, bytes, sha256: hash.digest('hex') },
    head: Buffer.concat(head),
    declaredType: file.mimeType,
  };
}

/** Stores bytes that arrived inline (base64 in a JSON body) the same way as a streamed upload. */
export async function storeUploadBuffer(storage: ObjectStorage, requestId: string, opts: { field: string; filename: string; mediaType: string; data: Buffer }): Promise<ReceivedUpload> {
  const key = `uploads/${requestId}/0-${safeName(opts.field)}`;
  await storage.put(key, opts.data, { contentType: opts.mediaType, contentLength: opts.data.length });
  return {
    field: opts.field,
    ref: { key, filename: opts.filename, mediaType: opts.mediaType, bytes: opts.data.length, sha256: createHash('sha256').update(opts.data).digest('hex') },
    head: opts.data.subarray(0, UPLOAD_HEAD_BYTES),
    declaredType: opts.mediaType,
  };
}

export async function deleteUploads(storage: ObjectStorage, refs: UploadRef[]): Promise<void> {
  await Promise.all(refs.map((ref) => storage.delete(ref.key).catch(() => undefined)));
}

/**
 * What an Idempotency-Key hashes for a body holding uploads: the files' content (their keys differ on
 * every request, their hashes do not).
 */
export function contentForIdempotency(body: Record<string, unknown>): Record<string, unknown> {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object' && 'key' in value && 'sha256' in value) {
      const ref = value as UploadRef;
      return { sha256: ref.sha256, bytes: ref.bytes, filename: ref.filename };
    }
    return value;
  };
  return Object.fromEntries(Object.entries(body).map(([name, value]) => [name, strip(value)]));
}

function safeName(field: string): string {
  return field.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 40) || 'file';
}
