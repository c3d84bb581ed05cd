import { expect } from 'chai';
import type { SpeechFormat } from '../../providers/types';
import { ctx, simulated, upstreamFailure } from './support';

const MEDIA_TYPES: Record<SpeechFormat, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };
const MAGIC: Record<SpeechFormat, (b: Buffer) => boolean> = {
  mp3: (b) => b.toString('latin1', 0, 3) === 'ID3',
  opus: (b) => b.toString('latin1', 0, 4) === 'OggS',
  aac: (b) => b[0] === 0xff && (b[1] & 0xf6) === 0xf0,
  flac: (b) => b.toString('latin1', 0, 4) === 'fLaC',
  wav: (b) => b.toString('latin1', 0, 4) === 'RIFF',
  pcm: (b) => b.length % 2 === 0,
};

describe('simulated provider: speech and transcription', () => {
  const provider = simulated();
  const tts = provider.speech!('sim-tts');
  const stt = provider.transcription!('sim-transcribe');
  const input = 'The simulated voice reads this sentence aloud.';

  for (const format of Object.keys(MEDIA_TYPES) as SpeechFormat[]) {
    it(`speaks ${format} (${MEDIA_TYPES[format]}), and transcription gives the text back`, async () => {
      const speech = await tts.doSynthesize({ input, voice: 'alloy', format, speed: 1 }, ctx());
      expect(speech.mediaType).to.equal(MEDIA_TYPES[format]);
      expect(MAGIC[format](speech.audio)).to.equal(true);
      expect(speech.seconds).to.be.closeTo(input.length * 0.06, 0.001);
      const transcript = await stt.doTranscribe({ audio: speech.audio, filename: `speech.${format}`, mediaType: speech.mediaType }, ctx());
      expect(transcript.text).to.equal(input);
      expect(transcript.durationSeconds).to.be.closeTo(speech.seconds!, 0.15);
      expect(transcript.language).to.equal('en');
    });
  }

  it('makes pcm raw 16-bit samples at 24 kHz, its length following the speed', async () => {
    const normal = await tts.doSynthesize({ input, voice: 'nova', format: 'pcm', speed: 1 }, ctx());
    const fast = await tts.doSynthesize({ input, voice: 'nova', format: 'pcm', speed: 2 }, ctx());
    expect(normal.audio.length).to.equal(Math.round(input.length * 0.06 * 24000) * 2);
    expect(fast.audio.length).to.equal(normal.audio.length / 2);
    expect(fast.seconds).to.be.closeTo(normal.seconds! / 2, 0.001);
  });

  it('lasts at least half a second', async () => {
    const speech = await tts.doSynthesize({ input: 'Hi', voice: 'nova', format: 'wav', speed: 1 }, ctx());
    expect(speech.seconds).to.equal(0.5);
  });

  it('refuses empty input and out-of-range speed', async () => {
    expect((await upstreamFailure(() => tts.doSynthesize({ input: ' ', voice: 'nova', format: 'mp3', speed: 1 }, ctx()))).kind).to.equal('caller_error');
    expect((await upstreamFailure(() => tts.doSynthesize({ input: 'x', voice: 'nova', format: 'mp3', speed: 9 }, ctx()))).kind).to.equal('caller_error');
  });

  it('transcribes foreign audio as a stable sentence, in segments of about 5 s, timed from the container', async () => {
    const seconds = 12;
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'latin1');
    header.writeUInt32LE(36 + seconds * 32000, 4);
    header.write('WAVEfmt ', 8, 'latin1');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(16000, 24);
    header.writeUInt32LE(32000, 28);
    header.writeUInt16LE(2, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'latin1');
    header.writeUInt32LE(seconds * 32000, 40);
    const body = Buffer.alloc(seconds * 32000);
    for (let i = 0; i < body.length; i += 2) body.writeInt16LE(Math.round(3000 * Math.sin(i / 9) + 1), i);
    const wav = Buffer.concat([header, body]);
    const a = await stt.doTranscribe({ audio: wav, filename: 'call.wav', mediaType: 'audio/wav', language: 'fr' }, ctx());
    const b = await stt.doTranscribe({ audio: wav, filename: 'call.wav', mediaType: 'audio/wav', language: 'fr' }, ctx());
    expect(a).to.deep.equal(b);
    expect(a.durationSeconds).to.equal(12);
    expect(a.language).to.equal('fr');
    expect(a.text.split(' ').length).to.be.at.least(25);
    expect(a.segments).to.have.length(3);
    expect(a.segments.map((s) => [s.start, s.end])).to.deep.equal([[0, 4], [4, 8], [8, 12]]);
    expect(a.segments.map((s) => s.text).join(' ')).to.equal(a.text);
  });

  it('refuses an empty upload', async () => {
    expect((await upstreamFailure(() => stt.doTranscribe({ audio: Buffer.alloc(0), filename: 'x.wav', mediaType: 'audio/wav' }, ctx()))).kind).to.equal('caller_error');
  });
});
