import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../../config/env';

describe('config: Vertex AI (VERTEX_*)', () => {
  const privateKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = { type: 'service_account', project_id: 'my-gcp-project', private_key_id: 'k1', private_key: privateKey, client_email: 'sa@my-gcp-project.iam.gserviceaccount.com', token_uri: 'https://oauth2.googleapis.com/token' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vertex-env-'));
  const file = (name: string, content: unknown) => {
    const target = path.join(dir, name);
    fs.writeFileSync(target, typeof content === 'string' ? content : JSON.stringify(content));
    return target;
  };
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('accepts a key file or its JSON, a project, a region or global, a base URL and a token endpoint', () => {
    expect(() => loadConfig({ VERTEX_CREDENTIALS_FILE: file('ok.json', key), VERTEX_LOCATION: 'europe-west4' })).not.to.throw();
    expect(() => loadConfig({ VERTEX_CREDENTIALS_JSON: JSON.stringify({ ...key, project_id: undefined }), VERTEX_PROJECT: 'other-project-42', VERTEX_LOCATION: 'global' })).not.to.throw();
    expect(() => loadConfig({ VERTEX_CREDENTIALS_JSON: JSON.stringify(key), VERTEX_BASE_URL: 'https://us-east5-aiplatform.googleapis.com', VERTEX_TOKEN_URL: 'http://127.0.0.1:8123/token' })).not.to.throw();
  });

  it('refuses at boot what would fail later, naming the variable', () => {
    const bad: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ VERTEX_CREDENTIALS_FILE: '/nonexistent/sa.json' }, /VERTEX_CREDENTIALS_FILE=\/nonexistent\/sa.json is not a readable file/],
      [{ VERTEX_CREDENTIALS_FILE: file('text.json', 'not json') }, /VERTEX_CREDENTIALS_FILE=.* is not JSON/],
      [{ VERTEX_CREDENTIALS_JSON: JSON.stringify({ ...key, type: 'authorized_user' }) }, /VERTEX_CREDENTIALS_JSON is not a service account key/],
      [{ VERTEX_CREDENTIALS_JSON: JSON.stringify({ ...key, private_key: 'secret' }) }, /VERTEX_CREDENTIALS_JSON has no PEM private_key/],
      [{ VERTEX_CREDENTIALS_JSON: JSON.stringify({ ...key, token_uri: 'http://tokens.example/token' }) }, /VERTEX_CREDENTIALS_JSON has a token_uri/],
      [{ VERTEX_CREDENTIALS_JSON: JSON.stringify({ ...key, project_id: undefined }) }, /VERTEX_PROJECT is required/],
      [{ VERTEX_CREDENTIALS_JSON: JSON.stringify(key), VERTEX_CREDENTIALS_FILE: file('both.json', key) }, /both set/],
      [{ VERTEX_PROJECT: 'My_Project' }, /VERTEX_PROJECT/],
      [{ VERTEX_LOCATION: 'us central' }, /VERTEX_LOCATION/],
      [{ VERTEX_BASE_URL: 'us-east5-aiplatform.googleapis.com' }, /VERTEX_BASE_URL/],
      [{ VERTEX_BASE_URL: 'https://us-east5-aiplatform.googleapis.com/v1/projects' }, /VERTEX_BASE_URL/],
      [{ VERTEX_TOKEN_URL: 'http://tokens.example/token' }, /VERTEX_TOKEN_URL/],
    ];
    for (const [env, named] of bad) {
      expect(() => loadConfig(env), JSON.stringify(env).slice(0, 200)).to.throw(ConfigError, named);
    }
  });
});
