/** Vorbis comments (FLAC's VORBIS_COMMENT block, Opus's OpusTags): little-endian lengths, KEY=value. */
import { AudioTags } from './synth';

export const VENDOR = 'model-gateway simulated';

export function tagsToComments(tags: AudioTags): string[] {
  const comments: string[] = [];
  if (tags.title) comments.push(`TITLE=${tags.title}`);
  if (tags.text) comments.push(`LYRICS=${tags.text}`);
  if (tags.software) comments.push(`ENCODER=${tags.software}`);
  return comments;
}

export function encodeVorbisComments(comments: string[], vendor = VENDOR): Buffer {
  const parts: Buffer[] = [lengthPrefixed(Buffer.from(vendor, 'utf8'))];
  const count = Buffer.alloc(4);
  count.writeUInt32LE(comments.length);
  parts.push(count);
  for (const comment of comments) parts.push(lengthPrefixed(Buffer.from(comment, 'utf8')));
  return Buffer.concat(parts);
}

/** Parses a comment list (after any packet magic); keys are upper-cased. */
export function parseVorbisComments(body: Buffer): { vendor: string; comments: Record<string, string> } | null {
  try {
    let offset = 0;
    const vendorLength = body.readUInt32LE(offset);
    const vendor = body.toString('utf8', offset + 4, offset + 4 + vendorLength);
    offset += 4 + vendorLength;
    const count = body.readUInt32LE(offset);
    offset += 4;
    const comments: Record<string, string> = {};
    for (let i = 0; i < count; i++) {
      const length = body.readUInt32LE(offset);
      const entry = body.toString('utf8', offset + 4, offset + 4 + length);
      offset += 4 + length;
      const equals = entry.indexOf('=');
      if (equals > 0) comments[entry.slice(0, equals).toUpperCase()] = entry.slice(equals + 1);
    }
    return { vendor, comments };
  } catch {
    return null;
  }
}

function lengthPrefixed(data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32LE(data.length);
  return Buffer.concat([length, data]);
}
