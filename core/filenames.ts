/**
 * A client's filename is data, never a path: it is kept as the file's display name only (storage keys use
 * the file id). Normalising it means: NFC, the last path segment only (so `../../etc/passwd` is `passwd`),
 * no control or bidirectional-override characters, collapsed whitespace, and at most 255 UTF-8 bytes with
 * the extension kept.
 */

export const MAX_FILENAME_BYTES = 255;
const MAX_EXTENSION_CHARS = 16;

/** C0/C1 controls, zero-width characters and bidi overrides (which can disguise an extension). */
const INVISIBLE = /[\p{Cc}\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/gu;

export function sanitizeFilename(raw: string | null | undefined, fallback = 'file'): string {
  let name = (raw ?? '').normalize('NFC').replace(INVISIBLE, '');
  name = name.split(/[\\/]/).pop() ?? '';
  name = name.replace(/\s+/g, ' ').trim();
  // `.` and `..` (and any run of dots) name directories, not files.
  if (/^\.*$/.test(name)) name = '';
  name = truncateUtf8(name, MAX_FILENAME_BYTES);
  return name || fallback;
}

/** Cuts to `maxBytes` of UTF-8 on a code point boundary, keeping a short extension at the end. */
function truncateUtf8(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= MAX_EXTENSION_CHARS + 1 ? name.slice(dot) : '';
  const stem = ext ? name.slice(0, dot) : name;
  const budget = maxBytes - Buffer.byteLength(ext);
  let out = '';
  let used = 0;
  for (const ch of stem) {
    const size = Buffer.byteLength(ch);
    if (used + size > budget) break;
    out += ch;
    used += size;
  }
  return out.trimEnd() + ext;
}

/** `Content-Disposition` value carrying a name safely: an ASCII fallback plus the RFC 5987 UTF-8 form. */
export function contentDisposition(kind: 'attachment' | 'inline', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
