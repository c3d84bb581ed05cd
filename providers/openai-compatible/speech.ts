/** `/audio/speech`: JSON in, audio bytes out. */
import type { Connection } from '../connection';
import { expectShape, upstreamBytes } from '../http';
import type { CallContext, SpeechFormat, SpeechModelAdapter, SpeechRequest, SpeechResult } from '../types';
import type { JsonObject } from './shape';

const FORMAT_MEDIA_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm',
};

export class OpenAICompatibleSpeechModel implements SpeechModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doSynthesize(req: SpeechRequest, ctx: CallContext): Promise<SpeechResult> {
    const provider = this.connection.providerId;
    const json: JsonObject = { model: this.model, input: req.input, voice: req.voice, response_format: req.format, speed: req.speed };
    if (req.instructions !== undefined) json.instructions = req.instructions;
    const { data, headers } = await upstreamBytes(provider, this.connection.url('/audio/speech'), this.connection.request(ctx, { json }));
    const contentType = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    expectShape(provider, data.length > 0, 'empty audio');
    expectShape(provider, !contentType.includes('json') && !contentType.startsWith('text/'), `audio answered as ${contentType}`);
    // Hosts label the same audio variously (audio/mp3, application/octet-stream); the format we asked for is the truth.
    return { audio: data, mediaType: FORMAT_MEDIA_TYPES[req.format] ?? (contentType || 'application/octet-stream') };
  }
}
