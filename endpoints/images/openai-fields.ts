/**
 * What image answers report about the images, in OpenAI's vocabulary (ImagesResponse and the stream's
 * completed events, openai-schemas/README.md): values OpenAI does not have for a field (DALL·E's
 * `standard`/`hd` quality, an unresolved `auto` background) are left out of responses, and the events,
 * which require every field, get `auto` instead.
 */
import type { ImageResult } from '../../providers/types';

const RESPONSE_QUALITIES = ['low', 'medium', 'high'];
const RESPONSE_BACKGROUNDS = ['transparent', 'opaque'];
const OUTPUT_FORMATS = ['png', 'webp', 'jpeg'];

export interface ImageFields {
  size?: string;
  quality?: string;
  background?: string;
  output_format?: string;
}

/** OpenAI's ImagesUsage: the input split into text and image tokens. */
export function imagesUsage(usage: NonNullable<ImageResult['usage']>) {
  const imageTokens = Math.min(usage.imageInputTokens ?? 0, usage.inputTokens);
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    input_tokens_details: { text_tokens: usage.inputTokens - imageTokens, image_tokens: imageTokens },
  };
}

/** The fields an images response may carry: what the provider reported, else what was asked, when OpenAI has the value. */
export function responseFields(params: Record<string, unknown>, reported: ImageResult['reported']): ImageFields {
  const pick = (value: unknown, allowed?: string[]) => (typeof value === 'string' && value !== '' && value !== 'auto' && (!allowed || allowed.includes(value)) ? value : undefined);
  const fields: ImageFields = {
    size: pick(reported?.size) ?? pick(params.size),
    quality: pick(reported?.quality, RESPONSE_QUALITIES) ?? pick(params.quality, RESPONSE_QUALITIES),
    background: pick(reported?.background, RESPONSE_BACKGROUNDS) ?? pick(params.background, RESPONSE_BACKGROUNDS),
    output_format: pick(reported?.outputFormat, OUTPUT_FORMATS) ?? pick(params.output_format, OUTPUT_FORMATS),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** A completed stream event's required fields: the response's, else `auto` (and the image's own format). */
export function completedEventFields(response: ImageFields, mediaType: string | undefined): Required<ImageFields> {
  return {
    size: response.size ?? 'auto',
    quality: response.quality ?? 'auto',
    background: response.background ?? 'auto',
    output_format: response.output_format ?? (mediaType === 'image/jpeg' ? 'jpeg' : mediaType === 'image/webp' ? 'webp' : 'png'),
  };
}
