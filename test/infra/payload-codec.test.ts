import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import { ConfigError, loadConfig } from '../../config/env';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadDecryptionError, resolveCodecKeys, resolveOperatorToken } from '../../infra/payload-codec';

const key = (id: string) => ({ id, key: randomBytes(32) });
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('AesGcmPayloadCodec (infra/payload-codec)', () => {
  const prompt = defaultPayloadConverter.toPayload({ messages: [{ role: 'user', content: 'the secret prompt' }] });

  it('seals a payload with the current key and opens it again, metadata and data intact', async () => {
    const codec = new AesGcmPayloadCodec([key('k1')]);
    const [sealed] = await codec.encode([prompt]);
    expect(text(sealed.metadata?.encoding)).to.equal(ENCRYPTED_ENCODING);
    expect(text(sealed.metadata?.[KEY_ID_METADATA])).to.equal('k1');
    expect(Object.keys(sealed.metadata ?? {})).to.have.members(['encoding', KEY_ID_METADATA]);
    expect(text(sealed.data)).not.to.contain('secret prompt');
    expect(text(sealed.data)).not.to.contain('json/plain');
    const [opened] = await codec.decode([sealed]);
    expect(text(opened.metadata?.encoding)).to.equal('json/plain');
    expect(defaultPayloadConverter.fromPayload(opened)).to.deep.equal({ messages: [{ role: 'user', content: 'the secret prompt' }] });
  });

  it('uses a fresh IV for every payload', async () => {
    const codec = new AesGcmPayloadCodec([key('k1')]);
    const [a, b] = await codec.encode([prompt, prompt]);
    expect(Buffer.from(a.data!).subarray(0, 12).equals(Buffer.from(b.data!).subarray(0, 12))).to.equal(false);
    expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).to.equal(false);
  });

  it('refuses altered ciphertext, a swapped key id and a truncated payload', async () => {
    const k1 = key('k1');
    const k2 = key('k2');
    const codec = new AesGcmPayloadCodec([k1, k2]);
    const [sealed] = await codec.encode([prompt]);
    const flipped = Buffer.from(sealed.data!);
    flipped[20] ^= 1;
    const relabelled: Payload = { ...sealed, metadata: { ...sealed.metadata, [KEY_ID_METADATA]: Buffer.from('k2') } };
    for (const tampered of [{ ...sealed, data: flipped }, relabelled, { ...sealed, data: Buffer.from(sealed.data!).subarray(0, 20) }]) {
      const err = await rejection(codec.decode([tampered]));
      expect(err).to.be.instanceOf(PayloadDecryptionError);
    }
  });

  it('rotates: the first key encrypts, older keys still decrypt, a dropped key no longer does', async () => {
    const k1 = key('k1');
    const k2 = key('k2');
    const [old] = await new AesGcmPayloadCodec([k1]).encode([prompt]);
    const rotated = new AesGcmPayloadCodec([k2, k1]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old]))[0])).to.have.property('messages');
    const [fresh] = await rotated.encode([prompt]);
    expect(text(fresh.metadata?.[KEY_ID_METADATA])).to.equal('k2');
    const err = await rejection(new AesGcmPayloadCodec([k2]).decode([old]));
    expect(err.message).to.contain("key 'k1'");
  });

  it('passes payloads that were never sealed through unchanged', async () => {
    const [opened] = await new AesGcmPayloadCodec([key('k1')]).decode([prompt]);
    expect(opened).to.equal(prompt);
  });
});

describe('codec keys and the operator token from the environment', () => {
  const base64Key = () => randomBytes(32).toString('base64');

  it('reads TEMPORAL_CODEC_KEYS in order, the first being the one that encrypts', () => {
    const [a, b] = [base64Key(), base64Key()];
    const config = loadConfig({ TEMPORAL_CODEC_KEYS: `k2:${a}, k1:${b}` });
    expect(config.codecKeys?.map((k) => k.id)).to.deep.equal(['k2', 'k1']);
    expect(config.codecKeys?.[0].key.toString('base64')).to.equal(a);
  });

  it('refuses malformed keys, keys of the wrong length and repeated ids at boot', () => {
    for (const value of ['k1', `k1:${base64Key()},`, 'k1:not base64!', `k1:${randomBytes(16).toString('base64')}`, `k1:${base64Key()},k1:${base64Key()}`]) {
      expect(() => loadConfig({ TEMPORAL_CODEC_KEYS: value }), value).to.throw(ConfigError);
    }
  });

  it('requires TEMPORAL_CODEC_KEYS in production, and a long operator token wherever one is given', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).to.throw(ConfigError, /TEMPORAL_CODEC_KEYS is required/);
    expect(loadConfig({ NODE_ENV: 'production', TEMPORAL_CODEC_KEYS: `k1:${base64Key()}`, PUBLIC_URL: 'https://gateway.example.com' }).generateDevSecrets).to.equal(false);
    expect(() => loadConfig({ OPERATOR_TOKEN: 'short' })).to.throw(ConfigError, /OPERATOR_TOKEN/);
  });

  it('allows the local Web UI origins by default, else exactly the configured ones', () => {
    expect(loadConfig({}).codecCorsOrigins).to.deep.equal(['http://127.0.0.1:8233', 'http://localhost:8233']);
    expect(loadConfig({ TEMPORAL_UI_PORT: '9233', TEMPORAL_UI_URL: 'https://temporal.example.com/ui' }).codecCorsOrigins)
      .to.deep.equal(['http://127.0.0.1:9233', 'http://localhost:9233', 'https://temporal.example.com']);
    expect(loadConfig({ CODEC_CORS_ORIGINS: 'https://ui.example.com, https://ops.example.com:8443' }).codecCorsOrigins)
      .to.deep.equal(['https://ui.example.com', 'https://ops.example.com:8443']);
    expect(() => loadConfig({ CODEC_CORS_ORIGINS: 'https://ui.example.com/path' })).to.throw(ConfigError);
  });

  it('outside production, keeps one development key and token in the data dir, private to the user', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'codec-keys-'));
    try {
      const config = { ...loadConfig({ GATEWAY_DATA_DIR: dataDir }) };
      const first = resolveCodecKeys(config);
      expect(first).to.have.length(1);
      expect(first[0].id).to.match(/^dev-[0-9a-f]{8}$/);
      expect(first[0].key).to.have.length(32);
      expect(resolveCodecKeys(config)[0].key.equals(first[0].key)).to.equal(true);
      const token = resolveOperatorToken(config);
      expect(token).to.have.length.greaterThan(32);
      expect(resolveOperatorToken(config)).to.equal(token);
      for (const file of ['temporal-codec-keys', 'operator-token']) {
        expect(fs.statSync(path.join(dataDir, file)).mode & 0o777, file).to.equal(0o600);
      }
      expect(fs.readdirSync(dataDir).sort()).to.deep.equal(['operator-token', 'temporal-codec-keys']);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('in production, generates nothing: no token means no codec endpoint', () => {
    const config = loadConfig({ NODE_ENV: 'production', TEMPORAL_CODEC_KEYS: `k1:${base64Key()}`, PUBLIC_URL: 'https://gateway.example.com', GATEWAY_DATA_DIR: '/nonexistent' });
    expect(resolveOperatorToken(config)).to.equal(null);
    expect(resolveCodecKeys(config).map((k) => k.id)).to.deep.equal(['k1']);
  });
});
