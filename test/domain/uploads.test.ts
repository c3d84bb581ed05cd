import { expect } from 'chai';
import { audioMediaType, estimateAudioSeconds, sniffImageType } from '../../domain/uploads';
import { pngImage } from '../support/media';
import sharp from 'sharp';

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
  it('sniffImageType: PNG, JPEG, WebP and GIF by their magic bytes, nothing else', async () => {
    const png = await pngImage(4, 4);
    expect(sniffImageType(png)).to.equal('image/png');
    expect(sniffImageType(await sharp(png).jpeg().toBuffer())).to.equal('image/jpeg');
    expect(sniffImageType(await sharp(png).webp().toBuffer())).to.equal('image/webp');
    expect(sniffImageType(Buffer.from('GIF89a....', 'latin1'))).to.equal('image/gif');
    expect(sniffImageType(Buffer.from('%PDF-1.7', 'latin1'))).to.equal(null);
    expect(sniffImageType(Buffer.alloc(0))).to.equal(null);
  });

  it('audioMediaType: the container when it is recognisable, else the declared type, else the extension', () => {
    expect(audioMediaType(wavHeader(48_000, 0), 'application/octet-stream', 'x.bin')).to.equal('audio/wav');
    expect(audioMediaType(Buffer.from('fLaC\0\0', 'latin1'), '', 'x')).to.equal('audio/flac');
    expect(audioMediaType(Buffer.from('OggS\0\0', 'latin1'), '', 'x')).to.equal('audio/ogg');
    expect(audioMediaType(Buffer.from('ID3\x04\0', 'latin1'), '', 'x')).to.equal('audio/mpeg');
    expect(audioMediaType(Buffer.from([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70, 0x4d, 0x34, 0x41, 0x20]), '', 'x')).to.equal('audio/mp4');
    expect(audioMediaType(Buffer.from('????'), 'audio/x-custom; codecs=a', 'x')).to.equal('audio/x-custom');
    expect(audioMediaType(Buffer.from('????'), 'application/octet-stream', 'talk.m4a')).to.equal('audio/mp4');
    expect(audioMediaType(Buffer.from('????'), '', 'noextension')).to.equal('application/octet-stream');
  });

  it('estimateAudioSeconds: exact for WAV and PCM, 64 kbit/s for compressed audio, at least one second', () => {
    expect(estimateAudioSeconds(wavHeader(48_000, 240_000), 44 + 240_000, 'audio/wav')).to.equal(5);
    expect(estimateAudioSeconds(wavHeader(48_000, 250_000), 44 + 250_000, 'audio/wav')).to.equal(6);
    expect(estimateAudioSeconds(Buffer.alloc(16), 96_000, 'audio/pcm')).to.equal(2);
    expect(estimateAudioSeconds(Buffer.from('ID3'), 80_000, 'audio/mpeg')).to.equal(10);
    expect(estimateAudioSeconds(Buffer.from('ID3'), 10, 'audio/mpeg')).to.equal(1);
  });
});
