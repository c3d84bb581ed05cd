/**
 * ISO BMFF (MP4) muxer for one H.264 video track: ftyp, moov (with avc1/avcC sample description and
 * the sample tables) ahead of mdat, so players can start before the whole file arrives.
 */
import { H264Encoded } from './h264';

const MOVIE_TIMESCALE = 1000;

export interface Mp4VideoTrack {
  width: number;
  height: number;
  fps: number;
  encoded: H264Encoded;
}

export function muxMp4(track: Mp4VideoTrack): Buffer {
  const samples = track.encoded.frames.map((frame) => Buffer.concat(frame.nalUnits.flatMap((unit) => [uint32(unit.length), unit])));
  const mediaTimescale = track.fps * 1000;
  const sampleDelta = 1000;
  const mediaDuration = samples.length * sampleDelta;
  const movieDuration = Math.round((mediaDuration * MOVIE_TIMESCALE) / mediaTimescale);
  const ftyp = box('ftyp', Buffer.from('isom'), uint32(0x200), Buffer.from('isomiso2avc1mp41'));
  const buildMoov = (chunkOffset: number) => box('moov',
    mvhd(movieDuration),
    box('trak',
      tkhd(movieDuration, track.width, track.height),
      box('mdia',
        mdhd(mediaTimescale, mediaDuration),
        hdlr(),
        box('minf',
          fullBox('vmhd', 0, 1, Buffer.alloc(8)),
          box('dinf', fullBox('dref', 0, 0, uint32(1), fullBox('url ', 0, 1))),
          box('stbl',
            fullBox('stsd', 0, 0, uint32(1), avc1(track)),
            fullBox('stts', 0, 0, uint32(1), uint32(samples.length), uint32(sampleDelta)),
            fullBox('stss', 0, 0, uint32(track.encoded.frames.filter((f) => f.keyframe).length),
              ...track.encoded.frames.flatMap((f, i) => (f.keyframe ? [uint32(i + 1)] : []))),
            fullBox('stsc', 0, 0, uint32(1), uint32(1), uint32(samples.length), uint32(1)),
            fullBox('stsz', 0, 0, uint32(0), uint32(samples.length), ...samples.map((s) => uint32(s.length))),
            fullBox('stco', 0, 0, uint32(1), uint32(chunkOffset)),
          ),
        ),
      ),
    ),
  );
  const moovSize = buildMoov(0).length;
  const mdatHeaderSize = 8;
  const moov = buildMoov(ftyp.length + moovSize + mdatHeaderSize);
  const mdatBody = Buffer.concat(samples);
  return Buffer.concat([ftyp, moov, uint32(mdatBody.length + 8), Buffer.from('mdat'), mdatBody]);
}

function mvhd(duration: number): Buffer {
  return fullBox('mvhd', 0, 0,
    uint32(0), uint32(0), uint32(MOVIE_TIMESCALE), uint32(duration),
    uint32(0x00010000), uint16(0x0100), Buffer.alloc(10), matrix(), Buffer.alloc(24), uint32(2));
}

function tkhd(duration: number, width: number, height: number): Buffer {
  return fullBox('tkhd', 0, 0x000003,
    uint32(0), uint32(0), uint32(1), uint32(0), uint32(duration), Buffer.alloc(8),
    uint16(0), uint16(0), uint16(0), uint16(0), matrix(), uint32(width * 0x10000), uint32(height * 0x10000));
}

function mdhd(timescale: number, duration: number): Buffer {
  // Language 'und' packed as three 5-bit letters.
  const language = ((('u'.charCodeAt(0) - 0x60) << 10) | (('n'.charCodeAt(0) - 0x60) << 5) | ('d'.charCodeAt(0) - 0x60));
  return fullBox('mdhd', 0, 0, uint32(0), uint32(0), uint32(timescale), uint32(duration), uint16(language), uint16(0));
}

function hdlr(): Buffer {
  return fullBox('hdlr', 0, 0, uint32(0), Buffer.from('vide'), Buffer.alloc(12), Buffer.from('VideoHandler\0'));
}

function avc1(track: Mp4VideoTrack): Buffer {
  const { sps, pps } = track.encoded;
  const avcC = box('avcC',
    Buffer.from([1, sps[1], sps[2], sps[3], 0xff, 0xe1]), uint16(sps.length), sps,
    Buffer.from([1]), uint16(pps.length), pps);
  const compressorName = Buffer.alloc(32);
  const name = 'simulated H.264';
  compressorName[0] = name.length;
  compressorName.write(name, 1, 'latin1');
  return box('avc1',
    Buffer.alloc(6), uint16(1), // reserved, data_reference_index
    uint16(0), uint16(0), Buffer.alloc(12),
    uint16(track.width), uint16(track.height),
    uint32(0x00480000), uint32(0x00480000), uint32(0), uint16(1),
    compressorName, uint16(0x0018), uint16(0xffff),
    avcC);
}

function matrix(): Buffer {
  return Buffer.concat([0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].map(uint32));
}

function box(type: string, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([uint32(body.length + 8), Buffer.from(type, 'latin1'), body]);
}

function fullBox(type: string, version: number, flags: number, ...content: Buffer[]): Buffer {
  return box(type, Buffer.from([version, (flags >> 16) & 0xff, (flags >> 8) & 0xff, flags & 0xff]), ...content);
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out;
}

function uint16(value: number): Buffer {
  const out = Buffer.alloc(2);
  out.writeUInt16BE(value & 0xffff);
  return out;
}

/** Lists the boxes directly inside `data[start, end)` (used by probes and tests). */
export { readBoxes } from '../../core/media-probe';
export type { Mp4Box } from '../../core/media-probe';
