/**
 * What kind of bytes a file holds. The bytes' own signature wins; then a specific type the client declared;
 * then the filename's extension. `image/*` is only ever claimed from a signature, since an image type
 * decides whether a chat model receives the file as a picture.
 */

export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

const IMAGE_SIGNATURES: Array<[ImageMediaType, (b: Buffer) => boolean]> = [
  ['image/png', (b) => b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a],
  ['image/jpeg', (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.length >= 6 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6))],
  ['image/webp', (b) => b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP'],
];

const OTHER_SIGNATURES: Array<[string, (b: Buffer) => boolean]> = [
  ['application/pdf', (b) => b.toString('latin1', 0, 5) === '%PDF-'],
  ['video/mp4', (b) => b.length >= 12 && b.toString('latin1', 4, 8) === 'ftyp'],
  ['audio/wav', (b) => b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WAVE'],
  ['audio/flac', (b) => b.toString('latin1', 0, 4) === 'fLaC'],
  ['audio/ogg', (b) => b.toString('latin1', 0, 4) === 'OggS'],
  ['audio/mpeg', (b) => b.toString('latin1', 0, 3) === 'ID3' || (b.length >= 2 && b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && (b[1] & 0x06) !== 0)],
  ['application/zip', (b) => b.length >= 4 && b.readUInt32BE(0) === 0x504b0304],
];

const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', tsv: 'text/tab-separated-values', html: 'text/html', htm: 'text/html',
  css: 'text/css', xml: 'application/xml', json: 'application/json', jsonl: 'application/jsonl', yaml: 'application/yaml', yml: 'application/yaml',
  js: 'text/javascript', ts: 'text/plain', py: 'text/x-python', java: 'text/x-java', c: 'text/x-c', cpp: 'text/x-c++', rb: 'text/x-ruby',
  go: 'text/x-go', rs: 'text/plain', sh: 'application/x-sh', tex: 'text/x-tex', pdf: 'application/pdf',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  mp3: 'audio/mpeg', wav: 'audio/wav', flac: 'audio/flac', ogg: 'audio/ogg', m4a: 'audio/mp4', mp4: 'video/mp4', webm: 'video/webm', zip: 'application/zip',
};

export const OCTET_STREAM = 'application/octet-stream';

/** The type the first bytes announce, if any (16 bytes are enough for every signature here). */
export function sniffMediaType(head: Buffer): string | null {
  for (const [type, test] of [...IMAGE_SIGNATURES, ...OTHER_SIGNATURES]) if (test(head)) return type;
  return null;
}

export function sniffImageType(head: Buffer): ImageMediaType | null {
  for (const [type, test] of IMAGE_SIGNATURES) if (test(head)) return type;
  return null;
}

export function mediaTypeForFile(opts: { head: Buffer; declared?: string | null; filename: string }): string {
  const sniffed = sniffMediaType(opts.head);
  if (sniffed) return sniffed;
  const declared = (opts.declared ?? '').split(';')[0].trim().toLowerCase();
  if (/^[a-z]+\/[a-z0-9.+-]+$/.test(declared) && declared !== OCTET_STREAM && !declared.startsWith('image/')) return declared;
  const ext = /\.([a-z0-9]{1,8})$/i.exec(opts.filename)?.[1].toLowerCase();
  return (ext && BY_EXTENSION[ext]) || OCTET_STREAM;
}
