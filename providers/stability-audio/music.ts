/**
 * Stable Audio text-to-audio: `POST /v2beta/audio/stable-audio-2/text-to-audio` with a multipart form
 * (prompt, duration, model, output_format, and optionally seed, steps, cfg_scale).
 *
 * We ask with `accept: audio/*`, so the answer is the audio bytes themselves (content type audio/mpeg or
 * audio/wav, plus `finish-reason` and `seed` headers). The alternative, `accept: application/json`, wraps
 * the same bytes in base64 inside JSON: a third larger on the wire and one more decode, for nothing we use.
 */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, upstreamBytes } from '../http';
import type { CallContext, MusicModelAdapter, MusicRequest, MusicResult } from '../types';

const TEXT_TO_AUDIO_PATH = '/v2beta/audio/stable-audio-2/text-to-audio';

const MEDIA_TYPE_BY_FORMAT: Record<MusicRequest['format'], string> = { mp3: 'audio/mpeg', wav: 'audio/wav' };

/** Optional form fields taken from the request's validated params, as Stability names them. */
const NUMERIC_PARAMS = ['seed', 'steps', 'cfg_scale'] as const;

export class StabilityAudioMusicModel implements MusicModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doGenerate(req: MusicRequest, ctx: CallContext): Promise<MusicResult> {
    const provider = this.connection.providerId;
    const request = this.connection.request(ctx, { method: 'POST', headers: { accept: 'audio/*' } });
    const form = new FormData();
    form.append('prompt', req.prompt);
    form.append('duration', String(req.durationSeconds));
    form.append('model', this.model);
    form.append('output_format', req.format);
    for (const name of NUMERIC_PARAMS) {
      const value = req.params[name];
      if (typeof value === 'number') form.append(name, String(value));
    }

    const { data, headers } = await upstreamBytes(provider, this.connection.url(TEXT_TO_AUDIO_PATH), { ...request, body: form });
    const contentType = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    expectShape(provider, contentType.startsWith('audio/') && data.length > 0, 'an answer that is not audio');
    if ((headers.get('finish-reason') ?? '').toUpperCase() === 'CONTENT_FILTERED') {
      // The bytes are whatever the filter left, not the requested track: do not hand them out as a result.
      throw new UpstreamError(`${provider} withheld the audio under its content policy`, { kind: 'caller_error', provider, code: 'content_filtered' });
    }
    return {
      tracks: [{ data, mediaType: contentType === 'audio/*' ? MEDIA_TYPE_BY_FORMAT[req.format] : contentType, durationSeconds: req.durationSeconds }],
    };
  }
}
