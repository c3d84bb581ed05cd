/**
 * What the media handlers share: their provider adapters, uploaded inputs read back from object storage,
 * and results written there. Media bytes never travel through workflow history: the handler stores them
 * under `results/<requestId>/` and its response refers to them, by signed URL or (for `b64_json`) in a
 * response body that is itself kept in storage.
 */
import type { ModelRecord } from '../catalog/types';
import { UpstreamError } from '../core/errors';
import type { UploadRef } from '../domain/uploads';
import type { ObjectStorage } from '../infra/storage';
import { upstreamBytes } from '../providers/http';
import type { CallContext, GeneratedImage, ImageInputFile } from '../providers/types';
import type { CallEnv, EndpointResponse } from './types';

/** Lifetime of the signed URLs in media responses: about an hour, as OpenAI's image URLs. */
export const RESULT_URL_TTL_SECONDS = 3600;

export function callContext(env: CallEnv): CallContext {
  return { requestId: env.requestId, simulate: env.simulate, signal: env.signal };
}

export async function readUpload(storage: ObjectStorage, ref: UploadRef): Promise<ImageInputFile> {
  return { data: await storage.getBuffer(ref.key), filename: ref.filename, mediaType: ref.mediaType };
}

/** An image's bytes: inline from the provider, or fetched from the provider's (short-lived) URL. */
export async function imageBytes(record: ModelRecord, image: GeneratedImage, env: CallEnv): Promise<Buffer> {
  if (image.data) return image.data;
  if (!image.url) throw new UpstreamError(`${record.provider} returned an image without data or URL`, { kind: 'bad_response', provider: record.provider });
  const { data } = await upstreamBytes(record.provider, image.url, { method: 'GET', signal: env.signal });
  return data;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif',
  'audio/mpeg': 'mp3', 'audio/ogg': 'opus', 'audio/aac': 'aac', 'audio/flac': 'flac', 'audio/wav': 'wav', 'audio/pcm': 'pcm',
  'text/plain; charset=utf-8': 'txt', 'application/json': 'json',
};

export function extensionFor(mediaType: string): string {
  return EXTENSIONS[mediaType] ?? 'bin';
}

/** Stores one result file under the request's prefix; returns its key. */
/** Where a request's result named `name` is kept (the Playground copies results from there). */
export function resultKey(requestId: string, name: string, contentType: string): string {
  return `results/${requestId}/${name}.${extensionFor(contentType)}`;
}

export async function storeResult(storage: ObjectStorage, requestId: string, name: string, data: Buffer, contentType: string): Promise<string> {
  const key = resultKey(requestId, name, contentType);
  await storage.put(key, data, { contentType, contentLength: data.length });
  return key;
}

export function signedResultUrl(storage: ObjectStorage, key: string, contentType: string): Promise<string> {
  return storage.signedUrl(key, RESULT_URL_TTL_SECONDS, { contentType });
}

/**
 * A JSON response. One holding media (base64 images) is kept in storage and streamed back by the API,
 * whatever its size, so the bytes stay out of workflow history; others travel inline.
 */
export async function jsonResponse(storage: ObjectStorage, requestId: string, body: Record<string, unknown>, holdsMedia: boolean): Promise<EndpointResponse> {
  if (!holdsMedia) return { kind: 'json', body };
  const data = Buffer.from(JSON.stringify(body));
  const storageKey = await storeResult(storage, requestId, 'response', data, 'application/json');
  return { kind: 'binary', storageKey, contentType: 'application/json', bytes: data.length };
}

/** A text response (transcripts as text, SRT or WebVTT), streamed back from storage. */
export async function textResponse(storage: ObjectStorage, requestId: string, text: string, contentType: string): Promise<EndpointResponse> {
  const data = Buffer.from(text, 'utf8');
  const storageKey = await storeResult(storage, requestId, 'transcript', data, contentType);
  return { kind: 'binary', storageKey, contentType, bytes: data.length };
}

/** The JSON body of a response, wherever it is kept (the image stream reads it to build its events). */
export async function readJsonResponse(storage: ObjectStorage, response: EndpointResponse): Promise<Record<string, unknown>> {
  if (response.kind === 'json') return response.body;
  if (response.contentType !== 'application/json') throw new Error(`response ${response.storageKey} is not JSON`);
  return JSON.parse((await storage.getBuffer(response.storageKey)).toString('utf8')) as Record<string, unknown>;
}
