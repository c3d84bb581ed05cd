import Ajv from 'ajv';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../config/env';
import { repoRoot } from '../../core/paths';
import { PROVIDER_HOSTS } from '../../providers/registry';
import { GATEWAY_SEARCH_ATTRIBUTES } from '../../workflows/contracts';

/** docker-compose.yml is for users (no engine runs here): keep it in step with what the code reads. */
describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true });

  it('is a valid Compose file (the compose-spec JSON schema vendored in deploy/schemas/compose-spec)', () => {
    const { $schema: _draft, ...schema } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'deploy', 'schemas', 'compose-spec', 'compose-spec.json'), 'utf8'));
    // The schema is draft-07 under a meta-schema URL ajv does not know by that spelling; union types are its own.
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).to.equal(true);
    const misspelt = structuredClone(compose);
    misspelt.services.api.depends_ons = misspelt.services.api.depends_on;
    expect(validate(misspelt), 'an unknown service key is refused').to.equal(false);
    const badDependency = structuredClone(compose);
    badDependency.services.api.depends_on = 'worker';
    expect(validate(badDependency), 'depends_on is a list or a map').to.equal(false);
  });

  it('has the production shape: postgres, temporal (its schema set up by admin-tools), temporal-ui, minio, api, worker', () => {
    expect(compose.services).to.include.keys('postgres', 'temporal-schema', 'temporal', 'temporal-setup', 'temporal-ui', 'minio', 'api', 'worker');
    const images = Object.values(compose.services as Record<string, { image?: string }>).map((s) => s.image ?? '');
    expect(images.filter((i) => /auto-setup/.test(i)), 'temporalio/auto-setup is for development only').to.deep.equal([]);
    const [, serverVersion] = /^temporalio\/server:(\d+\.\d+\.\d+)$/.exec(compose.services.temporal.image) ?? [];
    expect(serverVersion, compose.services.temporal.image).to.be.a('string');
    for (const name of ['temporal-schema', 'temporal-setup']) expect(compose.services[name].image, name).to.equal(`temporalio/admin-tools:${serverVersion}`);
  });

  it('sets up and upgrades both Temporal databases with temporal-sql-tool (postgres12) before the server starts', () => {
    const schema = compose.services['temporal-schema'];
    expect(schema.environment).to.include({ SQL_PLUGIN: 'postgres12', SQL_HOST: 'postgres', SQL_USER: compose.services.postgres.environment.POSTGRES_USER, SQL_PASSWORD: compose.services.postgres.environment.POSTGRES_PASSWORD });
    const script = (schema.command as string[]).join(' ');
    for (const [db, dir] of [['temporal', 'temporal'], ['temporal_visibility', 'visibility']]) {
      expect(script).to.contain(`temporal-sql-tool --db ${db} setup-schema -v 0.0`);
      expect(script).to.contain(`temporal-sql-tool --db ${db} update-schema -d /etc/temporal/schema/postgresql/v12/${dir}/versioned`);
    }
    const init = fs.readFileSync(path.join(repoRoot, 'scripts', 'docker', 'postgres-init.sql'), 'utf8');
    expect(init).to.match(/CREATE DATABASE temporal;/).and.to.match(/CREATE DATABASE temporal_visibility;/);
    expect(compose.services.temporal.depends_on['temporal-schema']).to.deep.equal({ condition: 'service_completed_successfully' });
    for (const name of ['api', 'worker']) {
      const after = compose.services[name].depends_on;
      expect(after.worker ?? after['temporal-setup'], name).to.be.an('object');
    }
    expect(compose.services.worker.depends_on['temporal-setup']).to.deep.equal({ condition: 'service_completed_successfully' });
  });

  it('runs the server on the checked-in config: Postgres persistence and visibility, 16 history shards, the dynamic config', () => {
    const server = compose.services.temporal;
    const mounts = new Map((server.volumes as string[]).map((v) => { const [from, to] = v.split(':'); return [to, from]; }));
    const configFile = mounts.get(server.environment.TEMPORAL_SERVER_CONFIG_FILE_PATH);
    expect(configFile, 'the config file is mounted where TEMPORAL_SERVER_CONFIG_FILE_PATH points').to.equal('./scripts/docker/temporal-server.yaml');
    const text = fs.readFileSync(path.join(repoRoot, configFile!), 'utf8');
    expect(text.startsWith('# enable-template'), 'the server fills {{ env ... }} only in a file that says so').to.equal(true);
    const config = parse(text);
    expect(config.persistence.numHistoryShards).to.equal(16);
    const stores = config.persistence.datastores;
    expect(stores[config.persistence.defaultStore].sql).to.include({ pluginName: 'postgres12', databaseName: '{{ default "temporal" (env "DBNAME") }}' });
    expect(stores[config.persistence.visibilityStore].sql).to.include({ pluginName: 'postgres12', databaseName: '{{ default "temporal_visibility" (env "VISIBILITY_DBNAME") }}' });
    expect(server.environment, 'the databases temporal-schema sets up').to.not.have.any.keys('DBNAME', 'VISIBILITY_DBNAME');
    for (const store of Object.values(stores) as Array<{ sql: Record<string, string> }>) {
      for (const variable of ['POSTGRES_SEEDS', 'POSTGRES_USER', 'POSTGRES_PWD']) {
        expect(Object.values(store.sql).join(' ')).to.contain(`env "${variable}"`);
        expect(server.environment, variable).to.have.property(variable);
      }
    }
    expect(config.services).to.have.keys('frontend', 'history', 'matching', 'worker');
    expect(config.services.frontend.rpc.grpcPort).to.equal(Number(compose.services.api.environment.TEMPORAL_ADDRESS.split(':')[1]));
    expect(mounts.get(config.dynamicConfigClient.filepath)).to.equal('./scripts/docker/temporal-dynamic-config.yaml');
    const dynamic = parse(fs.readFileSync(path.join(repoRoot, 'scripts', 'docker', 'temporal-dynamic-config.yaml'), 'utf8'));
    expect(dynamic['system.enableEagerWorkflowStart'][0].value).to.equal(true);
  });

  it('creates the namespace and registers every search attribute the workflows carry', () => {
    const script = (compose.services['temporal-setup'].command as string[]).join(' ');
    expect(script).to.contain('temporal operator namespace create --namespace default');
    const [, names] = /for a in ([A-Za-z ]+); do/.exec(script) ?? [];
    expect(names.split(' ')).to.have.members(GATEWAY_SEARCH_ATTRIBUTES.map((a) => a.name));
  });

  it('checks the API\'s and the worker\'s readiness, and gives them longer than their shutdown grace to stop', () => {
    for (const [name, port] of [['api', compose.services.api.environment.PORT], ['worker', compose.services.worker.environment.WORKER_HEALTH_PORT]]) {
      const service = compose.services[name];
      expect(service.healthcheck.test.join(' '), name).to.contain(`http://127.0.0.1:${port}/readyz`);
      const grace = Number(service.environment.GATEWAY_SHUTDOWN_GRACE_SECONDS);
      expect(Number(String(service.stop_grace_period).replace(/s$/, '')), name).to.be.greaterThan(grace);
    }
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
