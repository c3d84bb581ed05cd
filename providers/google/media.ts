/** Inline data and media types for Gemini parts. */

export function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const match = /^data:([^;,]+)?((?:;[^;,]*)*?);base64,/i.exec(url);
  if (!match) return null;
  return { mediaType: (match[1] ?? 'application/octet-stream').toLowerCase(), base64: url.slice(match[0].length) };
}

const BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', heic: 'image/heic', heif: 'image/heif',
  pdf: 'application/pdf', txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', html: 'text/html',
  mp3: 'audio/mp3', wav: 'audio/wav', ogg: 'audio/ogg', flac: 'audio/flac', aac: 'audio/aac', m4a: 'audio/mp4',
  mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mpeg: 'video/mpeg',
};

/** Gemini needs a mimeType for URLs it fetches itself; the path's extension is the only hint we have. */
export function guessMediaType(urlOrName: string, fallback: string): string {
  let path = urlOrName;
  try { path = new URL(urlOrName).pathname; } catch { /* a bare file name */ }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return (extension && BY_EXTENSION[extension]) || fallback;
}

/** `input_audio.format` (wav, mp3, ...) as a media type. */
export function audioMediaType(format: string): string {
  return BY_EXTENSION[format.toLowerCase()] ?? `audio/${format.toLowerCase()}`;
}
