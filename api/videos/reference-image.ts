/**
 * The reference image of an image-to-video request: `image_url` (fetched with infra/safe-fetch: public
 * addresses only, bounded size and time) or `image_base64` (raw base64 or a data: URL). Either way the
 * bytes must really be a PNG, JPEG, WebP or GIF. Bad input is a 400 naming the parameter.
 */
import { InvalidRequestError } from '../../core/errors';
import { sniffImageType } from '../../core/media-types';
import { safeFetch, SafeFetchError, type FetchRefusal } from '../../infra/safe-fetch';

export const MAX_REFERENCE_IMAGE_BYTES = 10 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_REDIRECTS = 3;

export interface ReferenceImage {
  data: Buffer;
  mediaType: string;
}

export interface ReferenceImageOptions {
  /** Widens the address policy (tests that serve images from 127.0.0.1). */
  isAllowedAddress?: (address: string) => boolean;
}

const REFUSAL_CODES: Record<FetchRefusal, string> = {
  invalid_url: 'invalid_image_url',
  forbidden_address: 'image_url_forbidden',
  too_large: 'image_too_large',
  unsupported_type: 'invalid_image',
  fetch_failed: 'image_url_unreachable',
  timeout: 'image_url_unreachable',
  too_many_redirects: 'image_url_unreachable',
};

export async function loadReferenceImage(body: { image_url?: string; image_base64?: string }, opts: ReferenceImageOptions = {}): Promise<ReferenceImage | null> {
  if (body.image_url !== undefined && body.image_base64 !== undefined) {
    throw new InvalidRequestError("Give either 'image_url' or 'image_base64', not both.", { param: 'image_url', code: 'invalid_value' });
  }
  if (body.image_base64 !== undefined) return decodeImage(body.image_base64, 'image_base64');
  if (body.image_url === undefined) return null;
  if (/^data:/i.test(body.image_url)) return decodeImage(body.image_url, 'image_url');
  let data: Buffer;
  try {
    ({ data } = await safeFetch(body.image_url, {
      maxBytes: MAX_REFERENCE_IMAGE_BYTES, timeoutMs: FETCH_TIMEOUT_MS, maxRedirects: MAX_REDIRECTS,
      // Some hosts label images generically; the bytes are checked below either way.
      accept: (type) => type.startsWith('image/') || type === 'application/octet-stream' || type === 'binary/octet-stream',
      isAllowedAddress: opts.isAllowedAddress,
    }));
  } catch (err) {
    if (err instanceof SafeFetchError) throw new InvalidRequestError(`Invalid 'image_url': ${err.message}`, { param: 'image_url', code: REFUSAL_CODES[err.reason] });
    throw err;
  }
  return asImage(data, 'image_url');
}

function decodeImage(value: string, param: string): ReferenceImage {
  const match = /^data:([^;,]*)(;[^,]*)?,/i.exec(value);
  if (match && !/;base64/i.test(match[2] ?? '')) {
    throw new InvalidRequestError(`Invalid '${param}': a data URL must be base64-encoded.`, { param, code: 'invalid_image' });
  }
  const text = (match ? value.slice(match[0].length) : value).replace(/\s+/g, '');
  if (text.length > Math.ceil(MAX_REFERENCE_IMAGE_BYTES / 3) * 4) {
    throw new InvalidRequestError(`Invalid '${param}': the image is larger than ${MAX_REFERENCE_IMAGE_BYTES} bytes.`, { param, code: 'image_too_large' });
  }
  if (text === '' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    throw new InvalidRequestError(`Invalid '${param}': not valid base64.`, { param, code: 'invalid_image' });
  }
  return asImage(Buffer.from(text, 'base64'), param);
}

function asImage(data: Buffer, param: string): ReferenceImage {
  const mediaType = sniffImageType(data);
  if (!mediaType) throw new InvalidRequestError(`Invalid '${param}': the content is not a PNG, JPEG, WebP or GIF image.`, { param, code: 'invalid_image' });
  return { data, mediaType };
}
