import { expect } from 'chai';
import { loadCatalogFiles } from '../../catalog/load';
import { musicHandler } from '../../endpoints/music/handler';
import { producedSeconds, speechCharacters, speechHandler } from '../../endpoints/audio/speech';
import { transcriptionHandler } from '../../endpoints/audio/transcription';
import { InvalidRequestError } from '../../core/errors';

const catalog = loadCatalogFiles();
const model = (slug: string) => catalog.find((r) => r.slug === slug)!;
const upload = (estimatedSeconds: number) => ({ key: 'uploads/x/0-file', filename: 'a.wav', mediaType: 'audio/wav', bytes: 1, sha256: 'x', estimatedSeconds });

describe('speech, transcription and music handlers', () => {
  it('speech: reserves per character exactly, or per second from the speaking pace and speed', () => {
    expect(speechHandler.estimate(model('tts-1'), { model: 'tts-1', input: 'x'.repeat(1000), voice: 'alloy' })).to.equal(1_500_000); // 1500 credits per 1M characters
    // 120 characters at 12 a second: 10 s at 0.025 credits a second; twice as fast, half as long.
    expect(speechHandler.estimate(model('gpt-4o-mini-tts'), { model: 'gpt-4o-mini-tts', input: 'x'.repeat(120), voice: 'alloy' })).to.equal(250_000);
    expect(speechHandler.estimate(model('sim-tts'), { model: 'sim-tts', input: 'x'.repeat(120), voice: 'alloy', speed: 2 })).to.equal(12_000);
    expect(speechCharacters('héllo 👋')).to.equal(7);
  });

  it('speech: voices, formats and instructions are the model\'s own', () => {
    const check = (slug: string, body: Record<string, unknown>) => {
      try {
        speechHandler.check(model(slug), { model: slug, input: 'hi', voice: 'alloy', ...body });
        return null;
      } catch (err) {
        expect(err).to.be.instanceOf(InvalidRequestError);
        return (err as InvalidRequestError).param;
      }
    };
    expect(check('tts-1', {})).to.equal(null);
    expect(check('tts-1', { voice: 'marin' })).to.equal('voice');
    expect(check('gpt-4o-mini-tts', { voice: 'marin', instructions: 'softly' })).to.equal(null);
    expect(check('tts-1', { instructions: 'softly' })).to.equal('instructions');
    expect(check('gemini-2.5-flash-preview-tts', { voice: 'Kore', response_format: 'mp3' })).to.equal('response_format');
  });

  it('speech: the produced length is read from the container, or derived for raw pcm', () => {
    const wav = Buffer.alloc(44 + 96_000);
    wav.write('RIFF', 0, 'latin1'); wav.writeUInt32LE(36 + 96_000, 4); wav.write('WAVEfmt ', 8, 'latin1');
    wav.writeUInt32LE(16, 16); wav.writeUInt16LE(1, 20); wav.writeUInt16LE(1, 22); wav.writeUInt32LE(24_000, 24);
    wav.writeUInt32LE(48_000, 28); wav.writeUInt16LE(2, 32); wav.writeUInt16LE(16, 34); wav.write('data', 36, 'latin1'); wav.writeUInt32LE(96_000, 40);
    expect(producedSeconds(wav, 'wav', 10, 1)).to.equal(2);
    expect(producedSeconds(Buffer.alloc(72_000), 'pcm', 10, 1)).to.equal(1.5);
    // Unreadable audio: the speaking-pace estimate (120 characters, 12 a second).
    expect(producedSeconds(Buffer.from('not audio at all'), 'mp3', 120, 1)).to.equal(10);
  });

  it('transcription: reserves on the upload estimate', () => {
    expect(transcriptionHandler.estimate(model('whisper-1'), { model: 'whisper-1', file: upload(60) })).to.equal(600_000);
    expect(transcriptionHandler.estimate(model('whisper-large-v3'), { model: 'whisper-large-v3', file: upload(100) })).to.equal(308_400);
  });

  it('music: reserves per track plus the requested (or default) duration', () => {
    expect(musicHandler.estimate(model('sim-music'), { model: 'sim-music', prompt: 'p', duration: 10 })).to.equal(1_200_000);
    expect(musicHandler.estimate(model('sim-music'), { model: 'sim-music', prompt: 'p' })).to.equal(1_600_000); // default 30 s
    expect(musicHandler.estimate(model('stable-audio-2.5'), { model: 'stable-audio-2.5', prompt: 'p' })).to.equal(20_000_000);
  });
});
