import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { loadConfig } from '../../config/env';
import { repoRoot } from '../../core/paths';
import { CHART_KINDS, SCHEMAS_DIR } from '../../scripts/generate-kubernetes-schemas';
import { ensureGoTool, HELM, KUBECONFORM } from '../../stack/go-tools';

/** The Kubernetes version whose schemas are vendored (deploy/schemas/kubernetes/README.md). */
const KUBERNETES_VERSION = '1.33.13';
const CHART = path.join(repoRoot, 'deploy', 'helm', 'model-gateway');
const CI_VALUES = path.join(repoRoot, 'deploy', 'helm', 'ci');
const NAMESPACE = 'gateway';

type Manifest = Record<string, any>;
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; fieldRef?: unknown } };

interface Rendered {
  file: string;
  values: Manifest;
  text: string;
  manifests: Manifest[];
}

/** The chart, linted and rendered with each CI values file, validated by kubeconform against the vendored schemas. */
describe('Helm chart deploy/helm/model-gateway', function () {
  this.timeout(30_000);
  const cacheDir = loadConfig().cacheDir;
  let helm: string;
  let kubeconform: string;
  let tmp: string;
  const rendered: Rendered[] = [];

  const run = (bin: string, args: string[]) => spawnSync(bin, args, { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: path.join(tmp, 'helm-cache'), HELM_CONFIG_HOME: path.join(tmp, 'helm-config'), HELM_DATA_HOME: path.join(tmp, 'helm-data') } });
  const template = (...args: string[]) => run(helm, ['template', 'gw', CHART, '--namespace', NAMESPACE, '--kube-version', KUBERNETES_VERSION, ...args]);
  const kubeconformOn = (files: string[]) => run(kubeconform, [
    '-strict', '-summary', '-output', 'json', '-kubernetes-version', KUBERNETES_VERSION,
    '-schema-location', path.join(SCHEMAS_DIR, '{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json'),
    ...files,
  ]);

  before(() => {
    helm = ensureGoTool(HELM, cacheDir);
    kubeconform = ensureGoTool(KUBECONFORM, cacheDir);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'helm-chart-test-'));
    for (const name of fs.readdirSync(CI_VALUES).filter((f) => f.endsWith('.yaml')).sort()) {
      const file = path.join(CI_VALUES, name);
      const out = template('-f', file);
      expect(out.status, `helm template -f ${name}: ${out.stderr}`).to.equal(0);
      const manifests = parseAllDocuments(out.stdout).map((d) => d.toJS() as Manifest).filter(Boolean);
      rendered.push({ file: name, values: parse(fs.readFileSync(file, 'utf8')) as Manifest, text: out.stdout, manifests });
      fs.writeFileSync(path.join(tmp, name), out.stdout);
    }
  });

  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const of = (r: Rendered, kind: string) => r.manifests.filter((m) => m.kind === kind);
  const one = (r: Rendered, kind: string, name: string) => {
    const found = r.manifests.find((m) => m.kind === kind && m.metadata.name === name);
    expect(found, `${r.file}: ${kind} ${name}`).to.not.equal(undefined);
    return found!;
  };
  const container = (d: Manifest) => d.spec.template.spec.containers[0] as Manifest;
  const envOf = (c: Manifest) => new Map((c.env as EnvVar[]).map((e) => [e.name, e]));
  const byName = (name: string) => rendered.find((r) => r.file === name)!;

  it('has a CI values file for each shape: defaults, Temporal Cloud with an API key, mTLS with existing Secrets, HPA off', () => {
    expect(rendered.map((r) => r.file)).to.deep.equal(['defaults.yaml', 'hpa-off.yaml', 'mtls-ingress-servicemonitor.yaml', 'temporal-cloud-api-key.yaml']);
  });

  it('passes helm lint --strict with each values file', () => {
    for (const { file } of rendered) {
      const lint = run(helm, ['lint', '--strict', CHART, '--kube-version', KUBERNETES_VERSION, '-f', path.join(CI_VALUES, file)]);
      expect(lint.status, `${file}: ${lint.stdout}${lint.stderr}`).to.equal(0);
    }
  });

  it(`renders only kinds whose schemas are vendored, and every manifest validates (kubeconform -strict, Kubernetes ${KUBERNETES_VERSION})`, () => {
    const vendored = new Set([...CHART_KINDS.map((k) => `${k.group ? `${k.group}/` : ''}${k.version} ${k.kind}`), 'monitoring.coreos.com/v1 ServiceMonitor']);
    for (const r of rendered) for (const m of r.manifests) expect(vendored.has(`${m.apiVersion} ${m.kind}`), `${r.file}: ${m.apiVersion} ${m.kind}`).to.equal(true);
    const out = kubeconformOn(rendered.map((r) => path.join(tmp, r.file)));
    expect(out.status, out.stdout + out.stderr).to.equal(0);
    const summary = JSON.parse(out.stdout).summary;
    expect(summary).to.deep.include({ invalid: 0, errors: 0, skipped: 0 });
    expect(summary.valid).to.equal(rendered.reduce((n, r) => n + r.manifests.length, 0));
  });

  it('kubeconform catches a misspelt field, a wrong type and a missing required field (the schemas are strict)', () => {
    const r = byName('defaults.yaml');
    const broken = (mutate: (d: Manifest) => void) => {
      const d = structuredClone(one(r, 'Deployment', 'gw-model-gateway-api'));
      mutate(d);
      const file = path.join(tmp, `broken-${Math.random().toString(36).slice(2)}.yaml`);
      fs.writeFileSync(file, stringify(d));
      return kubeconformOn([file]);
    };
    const misspelt = broken((d) => { container(d).readinessprobe = container(d).readinessProbe; });
    expect(misspelt.status).to.not.equal(0);
    expect(misspelt.stdout).to.contain('readinessprobe');
    expect(broken((d) => { d.spec.replicas = 'two'; }).status).to.not.equal(0);
    expect(broken((d) => { delete d.spec.selector; }).status).to.not.equal(0);
  });

  it('runs the image\'s real commands: the API, the worker, and `gateway migrate` as a pre-install/pre-upgrade hook', () => {
    for (const r of rendered) {
      for (const role of ['api', 'worker']) {
        const command = container(one(r, 'Deployment', `gw-model-gateway-${role}`)).command as string[];
        expect(command).to.deep.equal(['node', `dist/main/${role}.js`]);
        expect(fs.existsSync(path.join(repoRoot, command[1])), command[1]).to.equal(true);
      }
      const jobs = of(r, 'Job');
      if (r.values.migrations?.enabled === false) {
        expect(jobs, r.file).to.have.length(0);
        continue;
      }
      const job = one(r, 'Job', 'gw-model-gateway-migrate');
      expect(job.metadata.annotations['helm.sh/hook']).to.equal('pre-install,pre-upgrade');
      expect(container(job).command).to.deep.equal(['node', 'dist/cli/gateway.js', 'migrate']);
      expect(fs.existsSync(path.join(repoRoot, 'dist/cli/gateway.js'))).to.equal(true);
      expect(job.spec.template.spec.restartPolicy).to.equal('Never');
      // Hooks run before the release's own resources exist: the Job may only use Secrets that exist then.
      const hookSecrets = new Map(of(r, 'Secret').filter((s) => s.metadata.annotations?.['helm.sh/hook']).map((s) => [s.metadata.name, s]));
      for (const e of (container(job).env as EnvVar[]).filter((x) => x.valueFrom?.secretKeyRef)) {
        const ref = e.valueFrom!.secretKeyRef!;
        const hookSecret = hookSecrets.get(ref.name);
        if (hookSecret) {
          expect(hookSecret.metadata.annotations['helm.sh/hook']).to.equal('pre-install,pre-upgrade');
          expect(Number(hookSecret.metadata.annotations['helm.sh/hook-weight'])).to.be.lessThan(Number(job.metadata.annotations['helm.sh/hook-weight']));
          expect(hookSecret.data, `${r.file} ${e.name}`).to.have.property(ref.key);
        } else {
          expect(existingSecretNames(r.values), `${r.file}: ${e.name} from ${ref.name}`).to.include(ref.name);
        }
      }
      const env = envOf(container(job));
      expect([...env.keys()]).to.include.members(['DATABASE_URL', 'TEMPORAL_CODEC_KEYS', 'PUBLIC_URL', 'NODE_ENV']);
    }
  });

  it('probes /livez and /readyz on the API\'s port and on the worker\'s health port (WORKER_HEALTH_PORT)', () => {
    for (const r of rendered) {
      const api = container(one(r, 'Deployment', 'gw-model-gateway-api'));
      const worker = container(one(r, 'Deployment', 'gw-model-gateway-worker'));
      for (const [c, port] of [[api, 'http'], [worker, 'metrics']] as const) {
        expect(c.livenessProbe.httpGet).to.deep.equal({ path: '/livez', port });
        expect(c.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port });
        expect(c.startupProbe.httpGet).to.deep.equal({ path: '/livez', port });
        expect((c.ports as Manifest[]).map((p) => p.name)).to.include(port);
      }
      const healthPort = (worker.ports as Manifest[]).find((p) => p.name === 'metrics')!.containerPort;
      expect(healthPort).to.equal(r.values.worker?.healthPort ?? 9464);
      expect(envOf(worker).get('WORKER_HEALTH_PORT')?.value).to.equal(String(healthPort));
      // One server answers the probes and /metrics: WORKER_METRICS_PORT would move it off the probes' port.
      expect(envOf(worker).has('WORKER_METRICS_PORT')).to.equal(false);
      const apiPort = (api.ports as Manifest[]).find((p) => p.name === 'http')!.containerPort;
      expect(one(r, 'ConfigMap', 'gw-model-gateway').data.PORT).to.equal(String(apiPort));
      // Kubelet and Prometheus name the pod's IP in Host: the API must answer it (config/env.ts ALLOWED_HOSTS).
      expect(envOf(api).get('POD_IP')?.valueFrom?.fieldRef).to.deep.equal({ fieldPath: 'status.podIP' });
      expect(envOf(api).get('ALLOWED_HOSTS')?.value).to.match(/^\[\$\(POD_IP\)\],gw-model-gateway,/);
    }
  });

  it('runs non-root with a read-only root filesystem, /tmp an emptyDir, no service account token, and a shutdown grace the pod waits for', () => {
    for (const r of rendered) {
      const pods = [...of(r, 'Deployment'), ...of(r, 'Job')];
      expect(pods.length).to.be.greaterThan(1);
      for (const d of pods) {
        const pod = d.spec.template.spec;
        expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 1000 });
        expect(pod.automountServiceAccountToken).to.equal(false);
        for (const c of pod.containers as Manifest[]) {
          expect(c.securityContext).to.deep.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
          expect(c.securityContext.capabilities.drop).to.deep.equal(['ALL']);
          expect(c.resources.requests, `${d.metadata.name} requests`).to.have.keys('cpu', 'memory');
          expect(c.resources.limits.memory, `${d.metadata.name} memory limit`).to.be.a('string');
          const tmpMount = (c.volumeMounts as Manifest[]).find((m) => m.mountPath === '/tmp');
          expect((pod.volumes as Manifest[]).find((v) => v.name === tmpMount?.name)?.emptyDir, `${d.metadata.name} /tmp`).to.be.an('object');
        }
      }
      for (const d of of(r, 'Deployment')) {
        const c = container(d);
        const grace = Number(envOf(c).get('GATEWAY_SHUTDOWN_GRACE_SECONDS')?.value);
        const preStop = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
        expect(grace, d.metadata.name).to.be.greaterThan(0);
        expect(d.spec.template.spec.terminationGracePeriodSeconds, d.metadata.name).to.be.greaterThan(grace + preStop);
      }
    }
  });

  it('takes every secret from a Secret (the chart\'s or an existing one), never from a ConfigMap or a plain env value', () => {
    const secretVars = ['DATABASE_URL', 'TEMPORAL_CODEC_KEYS', 'OPERATOR_TOKEN', 'CAPTCHA_SECRET', 'SMTP_URL', 'REDIS_URL', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'TEMPORAL_API_KEY'];
    for (const r of rendered) {
      const secretValues = secretValuesOf(r.values);
      expect(secretValues.length + existingSecretNames(r.values).length, r.file).to.be.greaterThan(0);
      // A secret value appears only base64-encoded, in a Secret.
      for (const value of secretValues) expect(r.text, `${r.file}: a secret in plain text`).to.not.contain(value);
      for (const cm of of(r, 'ConfigMap')) {
        for (const [key, value] of Object.entries(cm.data as Record<string, string>)) {
          expect(secretVars.includes(key) || key.endsWith('_API_KEY'), `${r.file}: ConfigMap key ${key}`).to.equal(false);
          expect(/:\/\/[^/\s:@]+:[^/\s@]+@/.test(value), `${r.file}: credentials in ${key}`).to.equal(false);
        }
      }
      const chartSecrets = new Map(of(r, 'Secret').map((s) => [s.metadata.name, s]));
      for (const d of [...of(r, 'Deployment'), ...of(r, 'Job')]) {
        const env = envOf(container(d));
        for (const name of secretVars.filter((n) => env.has(n))) {
          const e = env.get(name)!;
          expect(e.value, `${r.file} ${d.metadata.name} ${name}`).to.equal(undefined);
          const ref = e.valueFrom!.secretKeyRef!;
          const own = chartSecrets.get(ref.name);
          if (own) expect(own.data, `${r.file}: ${ref.name} has ${ref.key}`).to.have.property(ref.key);
          else expect(existingSecretNames(r.values), `${r.file}: ${name} from ${ref.name}`).to.include(ref.name);
        }
      }
    }
  });

  it('with existingSecret everywhere, renders no Secret and references the named Secrets and keys', () => {
    const r = byName('mtls-ingress-servicemonitor.yaml');
    expect(of(r, 'Secret')).to.have.length(0);
    const env = envOf(container(one(r, 'Deployment', 'gw-model-gateway-api')));
    const ref = (name: string) => env.get(name)?.valueFrom?.secretKeyRef;
    expect(ref('DATABASE_URL')).to.deep.equal({ name: 'gateway-database', key: 'url' });
    expect(ref('S3_ACCESS_KEY_ID')).to.deep.equal({ name: 'gateway-s3', key: 'access-key' });
    expect(ref('S3_SECRET_ACCESS_KEY')).to.deep.equal({ name: 'gateway-s3', key: 'secret-key' });
    for (const name of ['TEMPORAL_CODEC_KEYS', 'OPERATOR_TOKEN', 'CAPTCHA_SECRET']) expect(ref(name)).to.deep.equal({ name: 'gateway-secrets', key: name });
    expect(container(one(r, 'Deployment', 'gw-model-gateway-worker')).envFrom).to.deep.include({ secretRef: { name: 'gateway-provider-keys' } });
    const job = container(one(r, 'Job', 'gw-model-gateway-migrate'));
    expect(envOf(job).get('DATABASE_URL')?.valueFrom?.secretKeyRef).to.deep.equal({ name: 'gateway-database', key: 'url' });
  });

  it('configures an external Temporal with the exact variables: Cloud with an API key, or mTLS with certificates from a Secret', () => {
    const cloud = byName('temporal-cloud-api-key.yaml');
    const cloudConfig = one(cloud, 'ConfigMap', 'gw-model-gateway').data;
    expect(cloudConfig).to.include({ TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233', TEMPORAL_NAMESPACE: 'gateway-prod.a1b2c', TEMPORAL_TLS: 'true' });
    expect(cloudConfig).to.not.have.any.keys('TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_CA_PATH');
    for (const role of ['api', 'worker']) {
      expect(envOf(container(one(cloud, 'Deployment', `gw-model-gateway-${role}`))).get('TEMPORAL_API_KEY')?.valueFrom?.secretKeyRef).to.deep.equal({ name: 'gw-model-gateway', key: 'TEMPORAL_API_KEY' });
    }

    const mtls = byName('mtls-ingress-servicemonitor.yaml');
    const config = one(mtls, 'ConfigMap', 'gw-model-gateway').data;
    expect(config).to.include({
      TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_NAME: 'gateway-prod.a1b2c.tmprl.cloud',
      TEMPORAL_TLS_CERT_PATH: '/etc/gateway/temporal-tls/tls.crt', TEMPORAL_TLS_KEY_PATH: '/etc/gateway/temporal-tls/tls.key', TEMPORAL_TLS_CA_PATH: '/etc/gateway/temporal-tls/ca.crt',
    });
    for (const role of ['api', 'worker']) {
      const d = one(mtls, 'Deployment', `gw-model-gateway-${role}`);
      const mount = (container(d).volumeMounts as Manifest[]).find((m) => m.mountPath === '/etc/gateway/temporal-tls');
      expect(mount).to.deep.include({ readOnly: true });
      expect((d.spec.template.spec.volumes as Manifest[]).find((v) => v.name === mount!.name)?.secret?.secretName).to.equal('temporal-client-tls');
      expect(envOf(container(d)).has('TEMPORAL_API_KEY')).to.equal(false);
    }
    expect(one(byName('defaults.yaml'), 'ConfigMap', 'gw-model-gateway').data.TEMPORAL_TLS).to.equal('false');
  });

  it('gives the gateway a configuration it accepts in production (ConfigMap + pod env + the Secrets\' values)', () => {
    for (const r of rendered) {
      for (const role of ['api', 'worker']) {
        const c = container(one(r, 'Deployment', `gw-model-gateway-${role}`));
        const env: Record<string, string> = { ...one(r, 'ConfigMap', 'gw-model-gateway').data };
        for (const e of c.env as EnvVar[]) {
          if (e.value !== undefined) env[e.name] = e.value.replace('$(POD_IP)', '10.1.2.3');
          else if (e.valueFrom?.secretKeyRef) env[e.name] = sampleSecret(e.name);
        }
        // The certificate files exist only in the pod (the Secret's mount); their variables are checked above.
        for (const name of ['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH']) delete env[name];
        const config = loadConfig(env);
        expect(config.publicUrl, r.file).to.equal(r.values.gateway.publicUrl);
        expect(config.temporalAddress).to.equal(r.values.temporal.address);
        expect(config.s3?.endpoint).to.equal(r.values.s3.endpoint);
        expect(config.host).to.equal('0.0.0.0');
        if (role === 'api') expect(config.allowedHosts).to.include.members(['10.1.2.3', 'gw-model-gateway', `gw-model-gateway.${NAMESPACE}.svc`]);
      }
    }
  });

  it('autoscales both Deployments on CPU with disruption budgets, or runs fixed replicas when HPA is off', () => {
    for (const r of rendered) {
      const hpaOff = r.file === 'hpa-off.yaml';
      for (const role of ['api', 'worker']) {
        const d = one(r, 'Deployment', `gw-model-gateway-${role}`);
        const podLabels = d.spec.template.metadata.labels;
        expect(d.spec.selector.matchLabels).to.deep.equal({ ...d.spec.selector.matchLabels, ...podLabels });
        const hpa = of(r, 'HorizontalPodAutoscaler').find((h) => h.metadata.name === d.metadata.name);
        const pdb = of(r, 'PodDisruptionBudget').find((p) => p.metadata.name === d.metadata.name);
        if (hpaOff) {
          expect(hpa, r.file).to.equal(undefined);
          expect(pdb).to.equal(undefined);
          expect(d.spec.replicas).to.equal(r.values[role].replicas);
          continue;
        }
        expect(d.spec, 'the HPA owns replicas').to.not.have.property('replicas');
        expect(hpa!.spec.scaleTargetRef).to.deep.equal({ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name });
        expect(hpa!.spec.metrics[0].resource).to.deep.include({ name: 'cpu' });
        expect(hpa!.spec.metrics[0].resource.target.type).to.equal('Utilization');
        expect(container(d).resources.requests.cpu, 'CPU utilization needs a request').to.be.a('string');
        expect(pdb!.spec.selector.matchLabels).to.deep.equal(d.spec.selector.matchLabels);
      }
    }
  });

  it('routes the Service, the optional Ingress and the ServiceMonitor (with the operator token) to the right ports', () => {
    for (const r of rendered) {
      const api = one(r, 'Deployment', 'gw-model-gateway-api');
      const service = one(r, 'Service', 'gw-model-gateway');
      expect(service.spec.selector).to.deep.equal(api.spec.selector.matchLabels);
      expect(service.spec.ports[0].targetPort).to.equal('http');
      const workerService = one(r, 'Service', 'gw-model-gateway-worker');
      expect(workerService.spec.selector).to.deep.equal(one(r, 'Deployment', 'gw-model-gateway-worker').spec.selector.matchLabels);
      expect(workerService.spec.ports[0].targetPort).to.equal('metrics');
      expect(of(r, 'Ingress')).to.have.length(r.values.ingress?.enabled ? 1 : 0);
      expect(of(r, 'ServiceMonitor')).to.have.length(r.values.serviceMonitor?.enabled ? 1 : 0);
    }
    const r = byName('mtls-ingress-servicemonitor.yaml');
    const ingress = one(r, 'Ingress', 'gw-model-gateway');
    expect(ingress.spec.ingressClassName).to.equal('nginx');
    expect(ingress.spec.rules[0].http.paths[0].backend.service).to.deep.equal({ name: 'gw-model-gateway', port: { name: 'http' } });
    expect(ingress.spec.tls).to.deep.equal([{ secretName: 'gateway-tls', hosts: ['gateway.example.com'] }]);

    const monitor = one(r, 'ServiceMonitor', 'gw-model-gateway');
    expect(monitor.metadata.labels.release).to.equal('kube-prometheus-stack');
    for (const s of of(r, 'Service')) {
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) expect(s.metadata.labels[k], `${s.metadata.name} ${k}`).to.equal(v);
    }
    expect(monitor.spec.endpoints.map((e: Manifest) => e.port)).to.deep.equal(['http', 'metrics']);
    for (const e of monitor.spec.endpoints) {
      expect(e.path).to.equal('/metrics');
      expect(e.authorization).to.deep.equal({ type: 'Bearer', credentials: { name: 'gateway-secrets', key: 'OPERATOR_TOKEN' } });
    }
  });

  it('refuses to render without what it needs, naming the value', () => {
    const missing = template('--set', 'gateway.publicUrl=https://gw.example.com');
    expect(missing.status).to.not.equal(0);
    expect(missing.stderr).to.contain('temporal.address is required');
    const noSecrets = template('-f', path.join(CI_VALUES, 'defaults.yaml'), '--set', 'secrets.codecKeys=');
    expect(noSecrets.status).to.not.equal(0);
    expect(noSecrets.stderr).to.contain('secrets.codecKeys and secrets.operatorToken, or secrets.existingSecret, are required');
    const secretInConfigMap = template('-f', path.join(CI_VALUES, 'defaults.yaml'), '--set', 'gateway.env.OPENAI_API_KEY=sk-x');
    expect(secretInConfigMap.status).to.not.equal(0);
    expect(secretInConfigMap.stderr).to.contain('gateway.env.OPENAI_API_KEY is a secret');
  });
});

/** The names of the existing Secrets a values file points at. */
function existingSecretNames(values: Manifest): string[] {
  return [values.database?.existingSecret, values.secrets?.existingSecret, values.s3?.existingSecret, values.temporal?.apiKey?.existingSecret, values.providers?.existingSecret].filter(Boolean);
}

/** The secret values a values file gives in plain text. */
function secretValuesOf(values: Manifest): string[] {
  return [
    values.database?.url, values.s3?.secretAccessKey, values.temporal?.apiKey?.value,
    ...Object.values(values.secrets ?? {}).filter((v) => v !== values.secrets?.existingSecret),
    ...Object.values(values.providers?.apiKeys ?? {}),
  ].filter((v): v is string => typeof v === 'string' && v.length > 0).flatMap((v) => v.split(','));
}

/** A well-formed value for a variable taken from a Secret (what the Secret would hold). */
function sampleSecret(name: string): string {
  const samples: Record<string, string> = {
    DATABASE_URL: 'postgres://gateway:pw@postgres:5432/gateway',
    TEMPORAL_CODEC_KEYS: 'k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=',
    OPERATOR_TOKEN: 'operator-token-0123456789abcdefghijklmnop',
    CAPTCHA_SECRET: 'captcha-secret-0123456789',
    SMTP_URL: 'smtp://user:pw@smtp.example.com:587',
    REDIS_URL: 'redis://redis:6379',
  };
  return samples[name] ?? `${name.toLowerCase()}-value`;
}
