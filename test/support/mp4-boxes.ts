/**
 * A small ISO BMFF (MP4) reader for tests, independent of the simulated provider's own writer: lists boxes,
 * walks container boxes and reads the sample entries of `stsd`, so a test can check that a file really is
 * an H.264 MP4 (ftyp, moov -> trak -> mdia -> minf -> stbl -> stsd -> avc1 with avcC).
 */

export interface Box {
  type: string;
  /** Offset of the box header. */
  start: number;
  /** Offset of the payload (after size/type, and a 64-bit size when present). */
  body: number;
  end: number;
}

export function readBoxes(data: Buffer, start = 0, end = data.length): Box[] {
  const boxes: Box[] = [];
  let offset = start;
  while (offset + 8 <= end) {
    let size = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    let body = offset + 8;
    if (size === 1) {
      size = Number(data.readBigUInt64BE(offset + 8));
      body = offset + 16;
    } else if (size === 0) {
      size = end - offset;
    }
    if (size < body - offset || offset + size > end) throw new Error(`box '${type}' at ${offset} overruns its parent`);
    boxes.push({ type, start: offset, body, end: offset + size });
    offset += size;
  }
  if (offset !== end) throw new Error(`trailing ${end - offset} bytes after the last box`);
  return boxes;
}

/** The box at `path` (each step the first child of that type), or undefined. */
export function findBox(data: Buffer, path: string[]): Box | undefined {
  let start = 0;
  let end = data.length;
  let found: Box | undefined;
  for (const type of path) {
    found = readBoxes(data, start, end).find((b) => b.type === type);
    if (!found) return undefined;
    start = found.body;
    end = found.end;
  }
  return found;
}

/** Sample entries of an `stsd` box: a full box (version/flags) with an entry count, then boxes. */
export function sampleEntries(data: Buffer, stsd: Box): Box[] {
  const count = data.readUInt32BE(stsd.body + 4);
  const entries = readBoxes(data, stsd.body + 8, stsd.end);
  if (entries.length !== count) throw new Error(`stsd says ${count} entries, holds ${entries.length}`);
  return entries;
}

/** Child boxes of a visual sample entry (after its 78 bytes of fixed fields). */
export function visualEntryChildren(data: Buffer, entry: Box): Box[] {
  return readBoxes(data, entry.body + 78, entry.end);
}
