/**
 * A transcription in the response formats OpenAI's endpoint offers: `json`, `verbose_json`, `text`,
 * `srt` and `vtt`. Adapters return one canonical result (text, duration, segments); the formats are made
 * here, so every model offers every format its catalog record allows.
 */
import type { TranscriptionResult, TranscriptionSegment } from '../../providers/types';

export type TranscriptFormat = 'json' | 'verbose_json' | 'text' | 'srt' | 'vtt';

export type TranscriptBody =
  | { kind: 'json'; body: Record<string, unknown> }
  | { kind: 'text'; text: string; contentType: string };

export interface TranscriptOptions {
  format: TranscriptFormat;
  /** verbose_json only: `segment` (default) and/or `word`. */
  granularities?: Array<'word' | 'segment'>;
  /** The billed length of the audio, seconds. */
  seconds: number;
  language?: string;
  /** The request's sampling temperature (verbose segments report it). */
  temperature?: number;
  /** verbose_json's `task` (default `transcribe`). */
  task?: 'transcribe' | 'translate';
}

export function formatTranscript(result: TranscriptionResult, opts: TranscriptOptions): TranscriptBody {
  const text = result.text.trim();
  const seconds = round(opts.seconds);
  switch (opts.format) {
    case 'text':
      return { kind: 'text', text: `${text}\n`, contentType: 'text/plain; charset=utf-8' };
    case 'srt':
      return { kind: 'text', text: srt(cues(result, seconds)), contentType: 'text/plain; charset=utf-8' };
    case 'vtt':
      return { kind: 'text', text: vtt(cues(result, seconds)), contentType: 'text/plain; charset=utf-8' };
    case 'verbose_json': {
      const granularities = opts.granularities?.length ? opts.granularities : ['segment'];
      const segments = cues(result, seconds);
      const body: Record<string, unknown> = { task: opts.task ?? 'transcribe', language: languageName(result.language ?? opts.language ?? 'en'), duration: seconds, text };
      if (granularities.includes('segment')) body.segments = segments.map((s) => verboseSegment(s, opts.temperature ?? 0));
      if (granularities.includes('word')) body.words = words(segments);
      body.usage = { type: 'duration', seconds };
      return { kind: 'json', body };
    }
    case 'json':
    default:
      return { kind: 'json', body: { text, usage: { type: 'duration', seconds } } };
  }
}

/**
 * A verbose_json segment in OpenAI's shape. Providers that report Whisper's decoding details give them;
 * for the others the gateway has none, and says so with neutral values: `seek` at the segment's start (in
 * Whisper's 10 ms frames), no tokens, the request's temperature, log probability 0, compression ratio 1,
 * no-speech probability 0.
 */
function verboseSegment(s: TranscriptionSegment, temperature: number) {
  const d = s.decoding ?? { seek: Math.round(s.start * 100), tokens: [], temperature, avgLogprob: 0, compressionRatio: 1, noSpeechProb: 0 };
  return {
    id: s.id, seek: d.seek, start: s.start, end: s.end, text: s.text, tokens: d.tokens,
    temperature: d.temperature, avg_logprob: d.avgLogprob, compression_ratio: d.compressionRatio, no_speech_prob: d.noSpeechProb,
  };
}

/** Whisper's language names, which OpenAI's verbose answers carry (`english`, not `en`), for the common codes. */
const LANGUAGE_NAMES: Record<string, string> = {
  en: 'english', zh: 'chinese', de: 'german', es: 'spanish', ru: 'russian', ko: 'korean', fr: 'french', ja: 'japanese',
  pt: 'portuguese', tr: 'turkish', pl: 'polish', ca: 'catalan', nl: 'dutch', ar: 'arabic', sv: 'swedish', it: 'italian',
  id: 'indonesian', hi: 'hindi', fi: 'finnish', vi: 'vietnamese', he: 'hebrew', uk: 'ukrainian', el: 'greek', ms: 'malay',
  cs: 'czech', ro: 'romanian', da: 'danish', hu: 'hungarian', ta: 'tamil', no: 'norwegian', th: 'thai', ur: 'urdu',
  hr: 'croatian', bg: 'bulgarian', lt: 'lithuanian', la: 'latin', cy: 'welsh', sk: 'slovak', fa: 'persian', lv: 'latvian',
  bn: 'bengali', sr: 'serbian', sl: 'slovenian', et: 'estonian', is: 'icelandic', af: 'afrikaans', sw: 'swahili',
};

/** A language as OpenAI's verbose answers name it: an ISO 639-1 code becomes Whisper's name; names stay. */
export function languageName(language: string): string {
  return LANGUAGE_NAMES[language.toLowerCase()] ?? language;
}

/** The result's segments, or one cue over the whole audio when the provider gave none. */
function cues(result: TranscriptionResult, seconds: number): TranscriptionSegment[] {
  const segments = result.segments.filter((s) => s.text.trim() !== '');
  if (segments.length > 0) return segments.map((s, id) => ({ ...s, id, start: round(s.start), end: round(s.end), text: s.text.trim() }));
  const text = result.text.trim();
  return text ? [{ id: 0, start: 0, end: seconds, text }] : [];
}

/**
 * Word timings when the provider gave segment timings only: each segment's span is shared among its
 * words in proportion to their length (an interpolation, not a measurement).
 */
function words(segments: TranscriptionSegment[]): Array<{ word: string; start: number; end: number }> {
  const out: Array<{ word: string; start: number; end: number }> = [];
  for (const segment of segments) {
    const list = segment.text.split(/\s+/).filter(Boolean);
    const total = list.reduce((n, w) => n + w.length, 0) || 1;
    let at = segment.start;
    for (const word of list) {
      const end = at + ((segment.end - segment.start) * word.length) / total;
      out.push({ word, start: round(at), end: round(end) });
      at = end;
    }
  }
  return out;
}

function srt(list: TranscriptionSegment[]): string {
  return list.map((c, i) => `${i + 1}\n${timestamp(c.start, ',')} --> ${timestamp(c.end, ',')}\n${c.text}\n`).join('\n');
}

function vtt(list: TranscriptionSegment[]): string {
  return `WEBVTT\n\n${list.map((c) => `${timestamp(c.start, '.')} --> ${timestamp(c.end, '.')}\n${c.text}\n`).join('\n')}`;
}

/** `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (WebVTT). */
export function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
