import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../../config/env';

describe('config: Azure OpenAI (AZURE_OPENAI_*, Entra ID AZURE_*)', () => {
  const entra = { AZURE_TENANT_ID: 'tenant-1', AZURE_CLIENT_ID: 'client-1', AZURE_CLIENT_SECRET: 's3cret' };

  it('accepts an endpoint with a key, or with Entra ID client credentials and another authority', () => {
    const ca = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'azure-env-')), 'ca.pem');
    fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
    expect(() => loadConfig({ AZURE_OPENAI_ENDPOINT: 'https://my-resource.openai.azure.com', AZURE_OPENAI_API_KEY: 'abc123', AZURE_OPENAI_API_VERSION: '2025-04-01-preview' })).not.to.throw();
    expect(() => loadConfig({ AZURE_OPENAI_ENDPOINT: 'https://my-resource.openai.azure.com/', ...entra, AZURE_AUTHORITY_HOST: 'https://login.microsoftonline.us', AZURE_AUTHORITY_CA_FILE: ca })).not.to.throw();
  });

  it('refuses malformed values and half an Entra ID configuration at boot, naming the variable', () => {
    const bad: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ AZURE_OPENAI_ENDPOINT: 'my-resource.openai.azure.com' }, /AZURE_OPENAI_ENDPOINT/],
      [{ AZURE_OPENAI_ENDPOINT: 'https://my-resource.openai.azure.com/openai/deployments' }, /AZURE_OPENAI_ENDPOINT/],
      [{ AZURE_OPENAI_API_VERSION: 'latest' }, /AZURE_OPENAI_API_VERSION/],
      [{ AZURE_TENANT_ID: 'tenant-1', AZURE_CLIENT_ID: 'client-1' }, /AZURE_CLIENT_SECRET/],
      [{ AZURE_CLIENT_SECRET: 's3cret' }, /AZURE_TENANT_ID/],
      [{ ...entra, AZURE_AUTHORITY_HOST: 'http://127.0.0.1:9999' }, /AZURE_AUTHORITY_HOST/],
      [{ ...entra, AZURE_AUTHORITY_HOST: 'https://login.example', AZURE_AUTHORITY_CA_FILE: '/nonexistent/ca.pem' }, /AZURE_AUTHORITY_CA_FILE/],
    ];
    for (const [env, named] of bad) {
      expect(() => loadConfig(env), JSON.stringify(env)).to.throw(ConfigError, named);
    }
  });
});
