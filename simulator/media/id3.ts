/** ID3v2.4 tags (UTF-8 text frames) put in front of MP3 streams: TIT2 title, USLT spoken text, TSSE software. */
import { id3v2Size } from '../../core/media-probe';
import { AudioTags } from './synth';

export function encodeId3(tags: AudioTags): Buffer {
  const frames: Buffer[] = [];
  if (tags.title) frames.push(frame('TIT2', Buffer.concat([Buffer.from([3]), Buffer.from(tags.title, 'utf8')])));
  if (tags.text) {
    // encoding, language, empty content descriptor, then the lyrics.
    frames.push(frame('USLT', Buffer.concat([Buffer.from([3]), Buffer.from('und', 'latin1'), Buffer.from([0]), Buffer.from(tags.text, 'utf8')])));
  }
  if (tags.software) frames.push(frame('TSSE', Buffer.concat([Buffer.from([3]), Buffer.from(tags.software, 'utf8')])));
  const body = Buffer.concat(frames);
  const header = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]);
  synchsafe(body.length).copy(header, 6);
  return Buffer.concat([header, body]);
}

export interface Id3Tag {
  /** Bytes the tag takes at the start of the file (header included). */
  size: number;
  frames: Record<string, string>;
}

/** Reads an ID3v2.3/2.4 tag at the start of `file`: text frames (T***) and USLT, decoded. */
export function parseId3(file: Buffer): Id3Tag | null {
  if (file.length < 10 || file.toString('latin1', 0, 3) !== 'ID3') return null;
  const version = file[3];
  const size = id3v2Size(file);
  const frames: Record<string, string> = {};
  let offset = 10;
  const end = Math.min(file.length, 10 + readSynchsafe(file, 6));
  while (offset + 10 <= end) {
    const id = file.toString('latin1', offset, offset + 4);
    if (!/^[A-Z0-9]{4}$/.test(id)) break;
    const frameSize = version === 4 ? readSynchsafe(file, offset + 4) : file.readUInt32BE(offset + 4);
    const body = file.subarray(offset + 10, Math.min(end, offset + 10 + frameSize));
    if (id.startsWith('T') && body.length > 0) frames[id] = decodeText(body[0], body.subarray(1));
    else if (id === 'USLT' && body.length > 4) {
      const rest = body.subarray(4);
      const terminatorWidth = body[0] === 1 || body[0] === 2 ? 2 : 1;
      let descriptorEnd = 0;
      while (descriptorEnd + terminatorWidth <= rest.length && rest.subarray(descriptorEnd, descriptorEnd + terminatorWidth).some((b) => b !== 0)) descriptorEnd += terminatorWidth;
      frames[id] = decodeText(body[0], rest.subarray(descriptorEnd + terminatorWidth));
    }
    offset += 10 + frameSize;
  }
  return { size, frames };
}

function frame(id: string, body: Buffer): Buffer {
  const header = Buffer.alloc(10);
  header.write(id, 0, 'latin1');
  synchsafe(body.length).copy(header, 4);
  return Buffer.concat([header, body]);
}

function synchsafe(value: number): Buffer {
  return Buffer.from([(value >> 21) & 0x7f, (value >> 14) & 0x7f, (value >> 7) & 0x7f, value & 0x7f]);
}

function readSynchsafe(data: Buffer, offset: number): number {
  return ((data[offset] & 0x7f) << 21) | ((data[offset + 1] & 0x7f) << 14) | ((data[offset + 2] & 0x7f) << 7) | (data[offset + 3] & 0x7f);
}

function decodeText(encoding: number, bytes: Buffer): string {
  if (encoding === 1 || encoding === 2) {
    let body = bytes;
    let littleEndian = encoding === 1;
    if (encoding === 1 && body.length >= 2) {
      littleEndian = !(body[0] === 0xfe && body[1] === 0xff);
      if ((body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xfe && body[1] === 0xff)) body = body.subarray(2);
    }
    const swapped = Buffer.from(body.subarray(0, body.length - (body.length % 2)));
    if (!littleEndian) swapped.swap16();
    return swapped.toString('utf16le').replace(/\0+$/, '');
  }
  return bytes.toString(encoding === 3 ? 'utf8' : 'latin1').replace(/\0+$/, '');
}
