import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
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

  /** Every published port as `{ hostIp, published, target }`, from the short or the long syntax. */
  function publishedPorts(service: string): Array<{ hostIp: string | null; published: string; target: string }> {
    return ((compose.services[service].ports ?? []) as Array<string | { host_ip?: string; published?: string | number; target: number }>).map((entry) => {
      if (typeof entry === 'object') return { hostIp: entry.host_ip ?? null, published: String(entry.published ?? entry.target), target: String(entry.target) };
      const parts = String(entry).split(':');
      const target = parts.pop()!;
      const published = parts.pop() ?? target;
      return { hostIp: parts.length ? parts.join(':') : null, published, target };
    });
  }

  it('publishes neither the Temporal frontend nor the Web UI on all interfaces', () => {
    expect(publishedPorts('temporal'), 'the frontend stays on the compose network').to.deep.equal([]);
    for (const service of Object.keys(compose.services)) {
      for (const port of publishedPorts(service)) {
        const temporalPort = service === 'temporal-ui' || ['7233', '8233'].includes(port.published) || ['7233', '8233'].includes(port.target);
        if (!temporalPort) continue;
        expect(port.hostIp, `${service} ${port.published}:${port.target}`).to.be.oneOf(['127.0.0.1', '::1', '[::1]']);
      }
    }
  });

  it('encrypts histories with keys the API and the worker share, and points the Web UI at the API\'s codec endpoint', () => {
    const env = (name: string) => compose.services[name].environment as Record<string, string>;
    for (const name of ['api', 'worker']) expect(env(name).TEMPORAL_CODEC_KEYS, name).to.match(/^\$\{TEMPORAL_CODEC_KEYS:\?/);
    expect(env('api').OPERATOR_TOKEN).to.match(/^\$\{OPERATOR_TOKEN:\?/);

    const secrets = { TEMPORAL_CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}`, OPERATOR_TOKEN: randomBytes(32).toString('base64') };
    // `${NAME:-default}` as compose reads it without NAME set.
    const withDefaults = Object.entries(env('api')).map(([k, v]) => [k, String(v).replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1')]);
    const withSecrets = Object.fromEntries(withDefaults.map(([k, v]) => [k, k in secrets ? secrets[k as keyof typeof secrets] : v]).filter(([, v]) => v !== '' && !String(v).startsWith('${')));
    const config = loadConfig({ ...withSecrets, NODE_ENV: 'production' });
    expect(config.codecKeys?.map((k) => k.id)).to.deep.equal(['k1']);
    expect(config.publicUrl, 'links in e-mails').to.equal(`http://localhost:${publishedPorts('api')[0].published}`);
    expect(config.allowedHosts, 'the Web UI container reaches the codec endpoint as api').to.include('api');

    const ui = env('temporal-ui');
    const apiPort = publishedPorts('api').find((p) => p.target === env('api').PORT)!.published;
    expect(ui.TEMPORAL_CODEC_ENDPOINT).to.equal(`http://localhost:${apiPort}/codec`);
    expect(ui.TEMPORAL_CODEC_INCLUDE_CREDENTIALS).to.equal('true');
    const uiPort = publishedPorts('temporal-ui')[0].published;
    expect(config.codecCorsOrigins).to.include.members([`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`]);
  });

  it('runs commands the build produces', () => {
    for (const name of ['api', 'worker']) {
      const [node, script] = compose.services[name].command as string[];
      expect(node).to.equal('node');
      expect(fs.existsSync(path.join(repoRoot, script)), script).to.equal(true);
    }
  });
});
