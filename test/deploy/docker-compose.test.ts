import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../config/env';
import { repoRoot } from '../../core/paths';
import { PROVIDER_HOSTS } from '../../providers/registry';

/** docker-compose.yml is for users (no engine runs here): keep it in step with what the code reads. */
describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true });

  it('has the production shape: postgres, temporal with schema setup, temporal-ui, minio, api, worker', () => {
    expect(compose.services).to.include.keys('postgres', 'temporal', 'temporal-ui', 'minio', 'api', 'worker');
    expect(compose.services.temporal.image).to.match(/^temporalio\/auto-setup:/);
  });

  for (const name of ['api', 'worker']) {
    it(`gives the ${name} an environment the gateway accepts, pointing at the other services`, () => {
      const env = compose.services[name].environment as Record<string, string>;
      const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '' && !String(v).startsWith('${'))));
      expect(config.databaseUrl).to.match(/@postgres:5432\//);
      expect(config.temporalAddress).to.equal('temporal:7233');
      expect(config.s3?.endpoint).to.equal('http://minio:9000');
      expect(config.s3?.accessKeyId).to.equal(compose.services.minio.environment.MINIO_ROOT_USER);
      expect(config.s3?.secretAccessKey).to.equal(compose.services.minio.environment.MINIO_ROOT_PASSWORD);
    });
  }

  it('names only provider variables the registry knows', () => {
    const env = compose.services.api.environment as Record<string, string>;
    const prefixes = PROVIDER_HOSTS.map((h) => `${h.envPrefix}_`);
    for (const key of Object.keys(env).filter((k) => k.endsWith('_API_KEY'))) {
      expect(prefixes.some((p) => key.startsWith(p)), key).to.equal(true);
    }
  });

  it('runs commands the build produces', () => {
    for (const name of ['api', 'worker']) {
      const [node, script] = compose.services[name].command as string[];
      expect(node).to.equal('node');
      expect(fs.existsSync(path.join(repoRoot, script)), script).to.equal(true);
    }
  });
});
