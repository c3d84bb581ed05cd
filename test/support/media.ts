/** Helpers for the media endpoint tests: real images to upload, container checks, ledger rows. */
import sharp from 'sharp';
import type { Knex } from 'knex';
import { PROVIDER_HOSTS } from '../../providers/registry';

/** A real PNG (with alpha) of the given size. */
export function pngImage(width = 64, height = 64, colour = { r: 200, g: 40, b: 90, alpha: 1 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: colour } }).png().toBuffer();
}

export const isPng = (b: Buffer) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
export const isJpeg = (b: Buffer) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
export const isWebp = (b: Buffer) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP';
export const isWav = (b: Buffer) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WAVE';
export const isFlac = (b: Buffer) => b.toString('latin1', 0, 4) === 'fLaC';
export const isOgg = (b: Buffer) => b.toString('latin1', 0, 4) === 'OggS';
/** ID3 tag, or an MPEG audio frame sync. */
export const isMp3 = (b: Buffer) => b.toString('latin1', 0, 3) === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0);
/** ADTS frame sync (AAC). */
export const isAdts = (b: Buffer) => b[0] === 0xff && (b[1] & 0xf6) === 0xf0;

/** Every provider's credentials blanked: real providers are "not configured" unless a test points one at a fake. */
export function withoutProviderKeys(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const blank = Object.fromEntries(PROVIDER_HOSTS.filter((h) => h.id !== 'simulated').map((h) => [`${h.envPrefix}_API_KEY`, '']));
  // Bedrock and Vertex have no key of that name: Bedrock's region configures it (the machine's AWS credentials
  // may sign), Vertex's service account key does.
  return { ...blank, BEDROCK_REGION: '', VERTEX_CREDENTIALS_JSON: '', VERTEX_CREDENTIALS_FILE: '', ...env };
}

/** The ledger rows of one request, oldest first. */
export async function ledgerKinds(db: Knex, requestId: string): Promise<string[]> {
  const rows = await db('credit_ledger').where({ request_id: requestId }).orderBy('id').select('kind');
  return rows.map((r: { kind: string }) => r.kind);
}

/** Reads a whole fetch Response body as bytes. */
export async function bytesOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}
