/**
 * Exact money math. Every amount is an integer number of micro-credits (1 credit = 1_000_000 µcr), computed
 * with bigint and returned as a safe integer so it can cross JSON and Temporal payloads unchanged. Catalog
 * prices are decimal credits; each is converted exactly (a price finer than 1 µcr per unit is refused).
 * A charge is rounded up to the next µcr once, on the whole charge: the operator never bills below list.
 *
 * Pure and dependency-free (apart from the error classes) so workflows may import it.
 */
import { InternalError } from '../core/errors';
import type { ModelRecord } from './types';

export const MICRO_PER_CREDIT = 1_000_000;

/** Output tokens reserved for a chat request that does not set max_tokens (capped by the model's limit). */
export const DEFAULT_OUTPUT_TOKEN_ESTIMATE = 4096;

/**
 * Prompt characters per token when only the text is known. Real tokenizers average about 4 for English
 * and fewer for other scripts; 3 over-reserves a little, and the surplus is released at settlement.
 */
export const CHARS_PER_TOKEN_ESTIMATE = 3;

/** Speech pace used to reserve for per-second priced voices: about 15 characters a second at speed 1. */
export const SPEECH_CHARS_PER_SECOND_ESTIMATE = 12;

const MICRO = 1_000_000n;
const MS_PER_SECOND = 1000n;

/** Exact conversion of a decimal credit amount to micro-credits; throws when it is finer than 1 µcr. */
export function creditsToMicro(credits: number): bigint {
  if (!Number.isFinite(credits) || credits < 0) throw new RangeError(`Not a price: ${credits}`);
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(credits.toString());
  if (!match) throw new RangeError(`Not a price: ${credits}`);
  const [, whole, fraction = '', exponent = '0'] = match;
  const digits = BigInt(whole + fraction);
  const shift = Number(exponent) - fraction.length + 6;
  if (shift >= 0) return digits * 10n ** BigInt(shift);
  const divisor = 10n ** BigInt(-shift);
  if (digits % divisor !== 0n) throw new RangeError(`Price ${credits} is finer than one micro-credit`);
  return digits / divisor;
}

/** Decimal credits for a response body: 1234 µcr -> 0.001234 (the nearest double to that decimal). */
export function formatCredits(micro: number | bigint): number {
  const value = BigInt(micro);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const text = `${negative ? '-' : ''}${abs / MICRO}.${(abs % MICRO).toString().padStart(6, '0')}`;
  return Number(text);
}

// ---------------------------------------------------------------- tokens (chat, embedding)

export interface TokenUsageCount {
  inputTokens: number;
  outputTokens?: number;
  /** Of `inputTokens`: written to the prompt cache (5 minutes, 1 hour) and read from it. */
  cacheWriteTokens?: number;
  cacheWrite1hTokens?: number;
  cacheReadTokens?: number;
}

/**
 * Chat (and any token-priced model): input and output tokens at their per-1M rates, rounded up once. Prompt
 * tokens written to or read from a prompt cache are priced at the model's cache rates (the input rate where
 * it has none).
 */
export function chatCost(record: ModelRecord, usage: TokenUsageCount): number {
  const inputRate = requirePrice(record, 'inputPerMTok', record.pricing.inputPerMTok);
  const outputTokens = usage.outputTokens ?? 0;
  const outputRate = outputTokens > 0 ? requirePrice(record, 'outputPerMTok', record.pricing.outputPerMTok) : 0n;
  const cached = [
    { tokens: count(usage.cacheWriteTokens ?? 0, 'cacheWriteTokens'), price: record.pricing.cacheWritePerMTok },
    { tokens: count(usage.cacheWrite1hTokens ?? 0, 'cacheWrite1hTokens'), price: record.pricing.cacheWrite1hPerMTok },
    { tokens: count(usage.cacheReadTokens ?? 0, 'cacheReadTokens'), price: record.pricing.cacheReadPerMTok },
  ];
  const uncached = count(usage.inputTokens, 'inputTokens') - cached.reduce((sum, c) => sum + c.tokens, 0n);
  if (uncached < 0n) throw new InternalError(`cached tokens exceed the ${usage.inputTokens} input tokens of a ${record.slug} call`);
  const cacheCost = cached.reduce((sum, c) => sum + c.tokens * (c.price === undefined ? inputRate : creditsToMicro(c.price)), 0n);
  const scaled = uncached * inputRate + cacheCost + count(outputTokens, 'outputTokens') * outputRate;
  return toSafe(ceilDiv(scaled, MICRO));
}

/** Embeddings: input tokens only. */
export function embeddingCost(record: ModelRecord, usage: { inputTokens: number }): number {
  return chatCost(record, { inputTokens: usage.inputTokens, outputTokens: 0 });
}

export interface ChatReservationInput {
  /** Prompt tokens when counted; otherwise estimated from promptChars. */
  promptTokens?: number;
  promptChars?: number;
  /** The request's max_tokens / max_completion_tokens, if any. */
  maxTokens?: number;
}

/**
 * What to reserve before a chat call: the prompt estimate plus the most the answer may cost. Without
 * max_tokens the answer is assumed to be at most min(maxOutputTokens, 4096) tokens.
 */
export function estimateChatReservation(record: ModelRecord, input: ChatReservationInput): number {
  const modelMax = record.maxOutputTokens ?? DEFAULT_OUTPUT_TOKEN_ESTIMATE;
  const promptTokens = input.promptTokens !== undefined
    ? count(input.promptTokens, 'promptTokens')
    : ceilDiv(count(input.promptChars ?? 0, 'promptChars'), BigInt(CHARS_PER_TOKEN_ESTIMATE));
  const requestedMax = input.maxTokens !== undefined ? count(input.maxTokens, 'maxTokens') : BigInt(Math.min(modelMax, DEFAULT_OUTPUT_TOKEN_ESTIMATE));
  const outputTokens = requestedMax < BigInt(modelMax) ? requestedMax : BigInt(modelMax);
  return chatCost(record, { inputTokens: Number(promptTokens), outputTokens: Number(outputTokens) });
}

// ---------------------------------------------------------------- images

export interface ImagePriceInput {
  n?: number;
  size?: string;
  quality?: string;
  /** Output resolution (1K/2K/4K); used as the quality key by models priced that way. */
  image_size?: string;
}

/** The price of one image, in µcr, or undefined when the record has no matching entry. */
export function imageUnitPrice(record: ModelRecord, quality: string | undefined, size: string | undefined): bigint | undefined {
  const table = record.pricing.perImage;
  if (!table) return undefined;
  const q = quality ?? '*';
  const s = size ?? '*';
  for (const key of [`${q}:${s}`, `${q}:*`, `*:${s}`, '*:*']) {
    const price = table[key];
    if (price !== undefined) return creditsToMicro(price);
  }
  return undefined;
}

/** Per image by quality (or image_size) and size, times n. Pass the params merged over the defaults. */
export function imageCost(record: ModelRecord, params: ImagePriceInput): number {
  const quality = params.quality ?? params.image_size;
  const unit = imageUnitPrice(record, quality, params.size);
  if (unit === undefined) {
    throw new InternalError(`Model '${record.slug}' has no image price for quality '${quality ?? '*'}' and size '${params.size ?? '*'}'.`);
  }
  return toSafe(unit * count(params.n ?? 1, 'n'));
}

// ---------------------------------------------------------------- audio, video, music

/** Speech: per 1M input characters, or per second of produced audio. */
export function speechCost(record: ModelRecord, usage: { characters: number; seconds?: number }): number {
  if (record.pricing.perMCharacters !== undefined) {
    const rate = creditsToMicro(record.pricing.perMCharacters);
    return toSafe(ceilDiv(count(usage.characters, 'characters') * rate, MICRO));
  }
  if (usage.seconds === undefined) throw new InternalError(`Model '${record.slug}' is priced per second; the audio length is needed.`);
  return perSecondCost(record, requirePrice(record, 'perSecond', record.pricing.perSecond), usage.seconds);
}

/** Speech reservation: exact for per-character prices, an over-estimate of the audio length otherwise. */
export function estimateSpeechReservation(record: ModelRecord, input: { characters: number; speed?: number }): number {
  if (record.pricing.perMCharacters !== undefined) return speechCost(record, { characters: input.characters });
  const speed = input.speed && input.speed > 0 ? input.speed : 1;
  const seconds = Math.ceil(input.characters / SPEECH_CHARS_PER_SECOND_ESTIMATE / speed);
  return speechCost(record, { characters: input.characters, seconds: Math.max(1, seconds) });
}

/** Transcription: per second of audio (token-priced models fall back to their token rates). */
export function transcriptionCost(record: ModelRecord, usage: { seconds: number; inputTokens?: number; outputTokens?: number }): number {
  if (record.pricing.perSecond !== undefined) return perSecondCost(record, creditsToMicro(record.pricing.perSecond), usage.seconds);
  return chatCost(record, { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 });
}

/** Video: per second at the resolution's rate (or the flat rate), times the number of videos. */
export function videoCost(record: ModelRecord, params: { seconds: number; resolution?: string; n?: number }): number {
  const byResolution = params.resolution !== undefined ? record.pricing.perSecondByResolution?.[params.resolution] : undefined;
  const rate = byResolution !== undefined ? creditsToMicro(byResolution) : requirePrice(record, 'perSecond', record.pricing.perSecond);
  return toSafe(BigInt(perSecondCost(record, rate, params.seconds)) * count(params.n ?? 1, 'n'));
}

/** Music: per track plus per second of the track, times the number of tracks. */
export function musicCost(record: ModelRecord, params: { seconds: number; n?: number }): number {
  const { perTrack, perSecond } = record.pricing;
  if (perTrack === undefined && perSecond === undefined) throw new InternalError(`Model '${record.slug}' has no music price.`);
  const track = perTrack !== undefined ? creditsToMicro(perTrack) : 0n;
  const seconds = perSecond !== undefined ? BigInt(perSecondCost(record, creditsToMicro(perSecond), params.seconds)) : 0n;
  return toSafe((track + seconds) * count(params.n ?? 1, 'n'));
}

// ---------------------------------------------------------------- batches

/**
 * A charge made as a line of a batch: the model's `batchDiscount` taken off (exactly, to the millionth),
 * rounded up once as every charge is. A model without one charges its list price in batches too.
 */
export function batchCharge(record: ModelRecord, chargeMicro: number): number {
  const discount = record.pricing.batchDiscount;
  if (!discount) return chargeMicro;
  const kept = MICRO - creditsToMicro(discount);
  return toSafe(ceilDiv(count(chargeMicro, 'chargeMicro') * kept, MICRO));
}

// ---------------------------------------------------------------- helpers

/** Durations are billed to the millisecond (after rounding away float noise below a microsecond). */
function perSecondCost(record: ModelRecord, ratePerSecond: bigint, seconds: number): number {
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`Invalid duration for '${record.slug}': ${seconds}`);
  const ms = BigInt(Math.ceil(Math.round(seconds * 1_000_000) / 1000));
  return toSafe(ceilDiv(ms * ratePerSecond, MS_PER_SECOND));
}

function requirePrice(record: ModelRecord, field: string, price: number | undefined): bigint {
  if (price === undefined) throw new InternalError(`Model '${record.slug}' has no '${field}' price.`);
  return creditsToMicro(price);
}

function count(value: number, what: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer, got ${value}`);
  return BigInt(value);
}

function ceilDiv(numerator: bigint, divisor: bigint): bigint {
  return (numerator + divisor - 1n) / divisor;
}

function toSafe(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`Amount too large: ${value} µcr`);
  return Number(value);
}
