/**
 * `/audio/transcriptions` and `/audio/translations`: multipart upload, verbose JSON back for the duration
 * and segments.
 */
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, TranscriptionModelAdapter, TranscriptionRequest, TranscriptionResult, TranscriptionSegment, TranslationRequest } from '../types';
import { isFiniteNumber, isObject, type JsonObject } from './shape';

export class OpenAICompatibleTranscriptionModel implements TranscriptionModelAdapter {
  constructor(
    private readonly connection: Connection,
    private readonly model: string,
    private readonly settings: { plainJson: boolean },
  ) {}

  doTranscribe(req: TranscriptionRequest, ctx: CallContext): Promise<TranscriptionResult> {
    return this.send('/audio/transcriptions', req, ctx);
  }

  doTranslate(req: TranslationRequest, ctx: CallContext): Promise<TranscriptionResult> {
    return this.send('/audio/translations', req, ctx);
  }

  private async send(path: string, req: TranslationRequest & { language?: string }, ctx: CallContext): Promise<TranscriptionResult> {
    const provider = this.connection.providerId;
    const form = new FormData();
    form.append('file', new Blob([req.audio], { type: req.mediaType }), req.filename);
    form.append('model', this.model);
    form.append('response_format', this.settings.plainJson ? 'json' : 'verbose_json');
    if (req.language !== undefined) form.append('language', req.language);
    if (req.prompt !== undefined) form.append('prompt', req.prompt);
    if (req.temperature !== undefined) form.append('temperature', String(req.temperature));
    const { body } = await upstreamJson(provider, this.connection.url(path), this.connection.request(ctx, { body: form }));
    expectShape(provider, isObject(body) && typeof body.text === 'string', 'transcription without text');
    const segments = Array.isArray(body.segments) ? body.segments.filter(isSegment).map(toSegment) : [];
    const language = typeof body.language === 'string' && body.language ? { language: body.language } : {};
    return { text: body.text as string, ...language, durationSeconds: durationOf(body, segments), segments };
  }
}

/**
 * Verbose answers carry `duration`; plain ones from newer models report `usage.seconds`; otherwise the
 * last segment's end is the best we have, and 0 means unknown (the caller then estimates).
 */
function durationOf(body: JsonObject, segments: TranscriptionSegment[]): number {
  if (isFiniteNumber(body.duration) && body.duration >= 0) return body.duration;
  if (isObject(body.usage) && isFiniteNumber(body.usage.seconds) && body.usage.seconds >= 0) return body.usage.seconds;
  return segments.length > 0 ? Math.max(...segments.map((segment) => segment.end)) : 0;
}

function isSegment(value: unknown): value is JsonObject {
  return isObject(value) && isFiniteNumber(value.start) && isFiniteNumber(value.end) && typeof value.text === 'string';
}

function toSegment(segment: JsonObject, position: number): TranscriptionSegment {
  const out: TranscriptionSegment = { id: isFiniteNumber(segment.id) ? segment.id : position, start: segment.start as number, end: segment.end as number, text: segment.text as string };
  const numbers = ['seek', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob'].map((name) => segment[name]);
  if (numbers.every(isFiniteNumber) && Array.isArray(segment.tokens) && segment.tokens.every(isFiniteNumber)) {
    const [seek, temperature, avgLogprob, compressionRatio, noSpeechProb] = numbers as number[];
    out.decoding = { seek, tokens: segment.tokens as number[], temperature, avgLogprob, compressionRatio, noSpeechProb };
  }
  return out;
}
