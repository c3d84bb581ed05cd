/** One entry point per output format for synthesized audio, with the media type each is served as. */
import { encodeAdtsAac } from './aac';
import { encodeFlac } from './flac';
import { encodeMp3 } from './mp3';
import { encodeOggOpus } from './opus';
import { AudioTags, PcmAudio, samplesToBytes } from './synth';
import { encodeWav } from './wav';

export type AudioFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

export const AUDIO_MEDIA_TYPES: Record<AudioFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/**
 * Encodes mono 16-bit PCM. `pcm` is the raw little-endian samples (24 kHz for speech, as OpenAI's is);
 * the other formats carry `tags` in their metadata (AAC: the text only, in data stream elements).
 */
export function encodeAudio(format: AudioFormat, audio: PcmAudio, tags: AudioTags = {}): Buffer {
  switch (format) {
    case 'wav': return encodeWav(audio, tags);
    case 'pcm': return Buffer.from(samplesToBytes(audio.samples));
    case 'mp3': return encodeMp3(audio, tags);
    case 'flac': return encodeFlac(audio, tags);
    case 'opus': return encodeOggOpus(audio, tags);
    case 'aac': return encodeAdtsAac(audio, tags.text);
  }
}
