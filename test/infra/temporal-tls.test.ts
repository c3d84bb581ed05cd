/**
 * The Temporal client's TLS, mutual TLS and API key settings from the environment (TEMPORAL_TLS*, TEMPORAL_API_KEY):
 * validated at boot, and turned into the connection options every Temporal connection of the gateway uses.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../config/env';
import { temporalConnectionOptions } from '../../infra/temporal';

describe('Temporal TLS and API key settings', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
  const file = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };
  const ca = file('ca.pem', 'CA');
  const cert = file('client.pem', 'CERT');
  const key = file('client.key', 'KEY');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('plain gRPC when nothing is set', () => {
    const config = loadConfig({});
    expect(config.temporalTls).to.equal(undefined);
    expect(temporalConnectionOptions(config.temporalTls)).to.deep.equal({});
  });

  it('mutual TLS from a CA, a server name and a client certificate', () => {
    const config = loadConfig({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA_PATH: ca, TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com', TEMPORAL_TLS_CERT_PATH: cert, TEMPORAL_TLS_KEY_PATH: key });
    expect(temporalConnectionOptions(config.temporalTls)).to.deep.equal({
      tls: { serverNameOverride: 'temporal.example.com', serverRootCACertificate: Buffer.from('CA'), clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') } },
    });
  });

  it('Temporal Cloud with an API key: TLS on by default, the system CAs', () => {
    const config = loadConfig({ TEMPORAL_API_KEY: 'cloud-api-key-123' });
    expect(temporalConnectionOptions(config.temporalTls)).to.deep.equal({ tls: true, apiKey: 'cloud-api-key-123' });
  });

  it('refuses contradictions and missing files at boot', () => {
    const refused = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(env);
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    expect(refused({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA_PATH: ca })).to.include('TEMPORAL_TLS_CA_PATH set while TEMPORAL_TLS=false');
    expect(refused({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'cloud-api-key-123' })).to.include('TEMPORAL_API_KEY is sent only over TLS');
    expect(refused({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CERT_PATH: cert })).to.include('TEMPORAL_TLS_KEY_PATH');
    expect(refused({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA_PATH: path.join(dir, 'missing.pem') })).to.include('is not a readable file');
    expect(refused({ TEMPORAL_TLS: 'yes' })).to.include('TEMPORAL_TLS');
    expect(refused({ DATABASE_POOL_MAX: '0' })).to.include('DATABASE_POOL_MAX');
  });
});
