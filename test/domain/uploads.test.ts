import { expect } from 'chai';
import { estimateAudioSeconds, recogniseAudio, UPLOAD_HEAD_BYTES } from '../../domain/uploads';
import { encodeAudio } from '../../simulator/media/audio';
import { synthesizeSpeech } from '../../simulator/media/synth';
import { pngImage } from '../support/media';

function wavHeader(byteRate: number, dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(byteRate / 2, 24);
  header.writeUInt32LE(byteRate, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

describe('upload recognition', () => {
  const speech = synthesizeSpeech('Recognise me by my bytes.', 'alloy', 1);

  it('recogniseAudio: the media type of each container from its first bytes', () => {
    const expected = { wav: 'audio/wav', mp3: 'audio/mpeg', flac: 'audio/flac', opus: 'audio/ogg', aac: 'audio/aac' } as const;
    for (const [format, mediaType] of Object.entries(expected)) {
      const file = encodeAudio(format as keyof typeof expected, speech);
      expect(recogniseAudio(file.subarray(0, UPLOAD_HEAD_BYTES), file.length)?.mediaType, format).to.equal(mediaType);
    }
    const pcm = encodeAudio('pcm', speech);
    expect(recogniseAudio(pcm, pcm.length, { filename: 'clip.pcm' })?.mediaType).to.equal('audio/pcm');
  });

  it('recogniseAudio: null for what is not audio, whatever its name or declared type says', async () => {
    const hints = { filename: 'speech.mp3', mediaType: 'audio/mpeg' };
    expect(recogniseAudio(Buffer.from('just some text, not a recording'), 31, hints)).to.equal(null);
    const png = await pngImage(8, 8);
    expect(recogniseAudio(png, png.length, hints)).to.equal(null);
    expect(recogniseAudio(Buffer.alloc(0), 0, hints)).to.equal(null);
  });

  it('estimateAudioSeconds: exact for WAV and PCM, 64 kbit/s for compressed audio, at least one second', () => {
    expect(estimateAudioSeconds(wavHeader(48_000, 240_000), 44 + 240_000, 'wav')).to.equal(5);
    expect(estimateAudioSeconds(wavHeader(48_000, 250_000), 44 + 250_000, 'wav')).to.equal(6);
    expect(estimateAudioSeconds(Buffer.alloc(16), 96_000, 'pcm')).to.equal(2);
    expect(estimateAudioSeconds(Buffer.from('ID3'), 80_000, 'mp3')).to.equal(10);
    expect(estimateAudioSeconds(Buffer.from('ID3'), 10, 'mp3')).to.equal(1);
  });
});
