/** Ogg pages (RFC 3533): packets laced into pages, each page checksummed. */
import { oggPages, OggPageView } from '../../core/media-probe';
import { oggCrc32 } from './checksums';

export interface OggPacket {
  data: Buffer;
  /** Granule position after this packet (-1 when no packet ends on the page). */
  granule: bigint;
}

const MAX_SEGMENTS = 255;

/**
 * Writes packets as pages. Each entry of `pageGroups` is a list of packets that start on a fresh page
 * (the headers must each begin a page); large packets continue onto further pages.
 */
export function writeOggStream(serial: number, pageGroups: OggPacket[][]): Buffer {
  const pages: Buffer[] = [];
  let sequence = 0;
  pageGroups.forEach((group, groupIndex) => {
    const lastGroup = groupIndex === pageGroups.length - 1;
    let segments: number[] = [];
    let bodies: Buffer[] = [];
    let granule = -1n;
    let continued = false;
    let nextContinues = false;
    const flush = (last: boolean) => {
      if (segments.length === 0) return;
      let flags = 0;
      if (continued) flags |= 0x01;
      if (sequence === 0) flags |= 0x02;
      if (last && lastGroup) flags |= 0x04;
      pages.push(page(serial, sequence++, flags, granule, segments, Buffer.concat(bodies)));
      segments = [];
      bodies = [];
      granule = -1n;
      continued = nextContinues;
    };
    group.forEach((packet, packetIndex) => {
      const lacing: number[] = [];
      let remaining = packet.data.length;
      while (remaining >= 255) {
        lacing.push(255);
        remaining -= 255;
      }
      lacing.push(remaining);
      let offset = 0;
      for (let i = 0; i < lacing.length; i++) {
        if (segments.length === MAX_SEGMENTS) {
          nextContinues = i > 0;
          flush(false);
        }
        segments.push(lacing[i]);
        bodies.push(packet.data.subarray(offset, offset + lacing[i]));
        offset += lacing[i];
      }
      nextContinues = false;
      granule = packet.granule;
      if (packetIndex === group.length - 1) flush(true);
    });
  });
  return Buffer.concat(pages);
}

function page(serial: number, sequence: number, flags: number, granule: bigint, segments: number[], body: Buffer): Buffer {
  const header = Buffer.alloc(27 + segments.length);
  header.write('OggS', 0, 'latin1');
  header[4] = 0;
  header[5] = flags;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(serial >>> 0, 14);
  header.writeUInt32LE(sequence, 18);
  header.writeUInt32LE(0, 22);
  header[26] = segments.length;
  segments.forEach((size, i) => { header[27 + i] = size; });
  const whole = Buffer.concat([header, body]);
  whole.writeUInt32LE(oggCrc32(whole), 22);
  return whole;
}

export interface OggPage extends OggPageView {
  checksumOk: boolean;
}

/** Splits an Ogg stream into pages (core/media-probe) and verifies their checksums. */
export function readOggPages(file: Buffer): OggPage[] {
  return oggPages(file).map((view) => {
    const whole = Buffer.from(file.subarray(view.offset, view.offset + 27 + view.segments.length + view.body.length));
    const stored = whole.readUInt32LE(22);
    whole.writeUInt32LE(0, 22);
    return { ...view, checksumOk: oggCrc32(whole) === stored };
  });
}

/** Reassembles the packets of a single logical stream. */
export function readOggPackets(pages: OggPage[]): Buffer[] {
  const packets: Buffer[] = [];
  let pending: Buffer[] = [];
  for (const entry of pages) {
    let offset = 0;
    for (const size of entry.segments) {
      pending.push(entry.body.subarray(offset, offset + size));
      offset += size;
      if (size < 255) {
        packets.push(Buffer.concat(pending));
        pending = [];
      }
    }
  }
  return packets;
}
