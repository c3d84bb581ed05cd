/**
 * Encrypted workflow histories: every payload the gateway's Temporal clients and workers send (workflow
 * inputs, activity arguments and results, signals, failure messages) is sealed with AES-256-GCM before it
 * leaves the process, so the Temporal server stores ciphertext only. Search attributes are not payloads and
 * stay readable; they carry ids, never prompts.
 *
 * A sealed payload: metadata `encoding: binary/encrypted` and `encryption-key-id: <id>`, data
 * `iv (12 random bytes) | ciphertext | tag (16 bytes)` of the original payload's protobuf bytes, with the
 * key id as additional data. The first key encrypts; every key decrypts, so rotation is adding a key in
 * front and dropping the old one once no history needs it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { parseCodecKeys, type CodecKey, type GatewayConfig } from '../config/env';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const ProtoPayload = temporal.api.common.v1.Payload;

export class PayloadDecryptionError extends Error {}

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly byId: ReadonlyMap<string, Buffer>;
  private readonly current: CodecKey;

  constructor(keys: readonly CodecKey[]) {
    if (keys.length === 0) throw new Error('the payload codec needs at least one key');
    this.current = keys[0];
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.seal(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.open(p));
  }

  private seal(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(this.current.id));
    const body = Buffer.concat([cipher.update(ProtoPayload.encode(payload).finish()), cipher.final()]);
    return {
      metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(this.current.id) },
      data: Buffer.concat([iv, body, cipher.getAuthTag()]),
    };
  }

  /** Payloads that were never sealed (histories from before encryption, the SDK core's own markers) pass as they are. */
  private open(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (!encoding || Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING) return payload;
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    const id = idBytes ? Buffer.from(idBytes).toString() : '';
    const key = this.byId.get(id);
    if (!key) throw new PayloadDecryptionError(`payload sealed with key '${id}', which is not among the configured TEMPORAL_CODEC_KEYS`);
    const data = Buffer.from(payload.data ?? []);
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError(`payload sealed with key '${id}' is truncated`);
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(`payload sealed with key '${id}' failed authentication (altered, or another key of the same id)`);
    }
    const decoded = ProtoPayload.decode(plain);
    return { metadata: decoded.metadata, data: decoded.data };
  }
}

/**
 * Failures go through ./failure-converter (message encrypted, stack traces dropped); it is named by path
 * because the workflow sandbox loads it into its own bundle.
 */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** The data converter of every Temporal client and worker the gateway creates. */
export function gatewayDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** The configured keys, else (outside production) the development key kept in the data dir. */
export function resolveCodecKeys(config: Pick<GatewayConfig, 'codecKeys' | 'dataDir' | 'generateDevSecrets'>): CodecKey[] {
  if (config.codecKeys) return config.codecKeys;
  if (!config.generateDevSecrets) throw new Error('TEMPORAL_CODEC_KEYS is not set');
  const file = path.join(config.dataDir, 'temporal-codec-keys');
  return parseCodecKeys(devSecret(file, () => `dev-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}`), file);
}

/**
 * A secret generated once into `file` (mode 600) and read back afterwards. Processes starting together
 * (the API and a worker, parallel tests) agree on one value: it is written aside and linked into place,
 * which fails for all but the first.
 */
export function devSecret(file: string, generate: () => string): string {
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    fs.writeFileSync(aside, `${generate()}\n`, { mode: 0o600 });
    try {
      fs.linkSync(aside, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(aside, { force: true });
    }
  }
  return fs.readFileSync(file, 'utf8').trim();
}

/** The codec endpoint's operator token: configured, else (outside production) the development one in the data dir; null: no endpoint. */
export function resolveOperatorToken(config: Pick<GatewayConfig, 'operatorToken' | 'dataDir' | 'generateDevSecrets'>): string | null {
  if (config.operatorToken) return config.operatorToken;
  if (!config.generateDevSecrets) return null;
  return devSecret(path.join(config.dataDir, 'operator-token'), () => randomBytes(32).toString('base64url'));
}
