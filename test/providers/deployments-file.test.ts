import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deploymentOrder, DeploymentsFileError, parseDeployments } from '../../providers/deployments';
import { PROVIDER_HOSTS } from '../../providers/registry';
import { providersFromEnv } from '../../main/providers';

const HOSTS = new Set(PROVIDER_HOSTS.map((h) => h.id));
const ENV = { EAST_KEY: 'k1', WEST_KEY: 'k2' };

const VALID = `# two deployments of one model
cooldownSeconds: 30
providers:
  openai-east:
    host: openai
    baseUrl: https://east.example.com/v1
    credentials:
      apiKey: EAST_KEY
  azure-west:
    host: azure
    baseUrl: https://west.openai.azure.com
    credentials: { apiKey: WEST_KEY }
    options: { apiVersion: 2024-10-21 }
models:
  gpt-4o-mini:
    routing: least-busy
    deployments:
      - name: east
        provider: openai-east
        weight: 3
        rpm: 500
        tpm: 200000
      - name: west
        provider: azure-west
        model: my-gpt-4o-mini
  gpt-4o:
    cooldownSeconds: 5
    deployments:
      - { name: direct, provider: openai }
`;

/** The error a file's text is refused with. */
function refusal(text: string, env: NodeJS.ProcessEnv = ENV): DeploymentsFileError {
  try {
    parseDeployments(text, '/etc/gateway/deployments.yaml', env, HOSTS);
  } catch (err) {
    expect(err).to.be.instanceOf(DeploymentsFileError);
    return err as DeploymentsFileError;
  }
  throw new Error('the file was accepted');
}

/** VALID with line `n` (1-based) replaced. */
const withLine = (n: number, line: string) => VALID.split('\n').map((l, i) => (i === n - 1 ? line : l)).join('\n');

describe('deployments file', () => {
  it('reads providers, models, routing, weights, limits and cool-downs', () => {
    const file = parseDeployments(VALID, 'deployments.yaml', ENV, HOSTS);
    expect(file.providers.get('azure-west')).to.include({ host: 'azure', baseUrl: 'https://west.openai.azure.com' });
    expect(file.providers.get('azure-west')!.options).to.deep.equal({ apiVersion: '2024-10-21' });
    const mini = file.models.get('gpt-4o-mini')!;
    expect(mini).to.include({ routing: 'least-busy', cooldownMs: 30_000, line: 15 });
    expect(mini.deployments).to.deep.equal([
      { name: 'east', provider: 'openai-east', upstreamModel: undefined, weight: 3, rpm: 500, tpm: 200000, line: 18 },
      { name: 'west', provider: 'azure-west', upstreamModel: 'my-gpt-4o-mini', weight: 1, rpm: undefined, tpm: undefined, line: 23 },
    ]);
    expect(file.models.get('gpt-4o')).to.include({ routing: 'weighted', cooldownMs: 5_000 });
  });

  it('reads the same as JSON', () => {
    const json = JSON.stringify({ models: { 'gpt-4o': { deployments: [{ name: 'a', provider: 'openai' }, { name: 'b', provider: 'openai', weight: 2 }] } } }, null, 2);
    const file = parseDeployments(json, 'deployments.json', {}, HOSTS);
    expect(file.models.get('gpt-4o')!.deployments.map((d) => d.weight)).to.deep.equal([1, 2]);
  });

  it('names the file and the line of each mistake', () => {
    const cases: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
      [withLine(20, '        weight: -1'), ENV, /deployments\.yaml:20: models\.gpt-4o-mini\.deployments\.0\.weight must be > 0/],
      [withLine(16, '    routing: fastest'), ENV, /deployments\.yaml:16: models\.gpt-4o-mini\.routing must be equal to one of the allowed values \(one of weighted, least-busy, lowest-latency\)/],
      [withLine(21, '        rpn: 500'), ENV, /deployments\.yaml:21: unknown field 'rpn' in models\.gpt-4o-mini\.deployments\.0/],
      [withLine(19, '        provider: openai-north'), ENV, /deployments\.yaml:19: 'openai-north' is neither a provider of this file nor a known host/],
      [withLine(5, '    host: openia'), ENV, /deployments\.yaml:5: unknown host 'openia'/],
      [VALID, { EAST_KEY: 'k1' }, /deployments\.yaml:12: the environment variable WEST_KEY \(azure-west's apiKey\) is not set/],
      [withLine(23, '      - name: east'), ENV, /deployments\.yaml:23: the deployment name 'east' is already used on line 18/],
      [withLine(18, '      - model: mini'), ENV, /deployments\.yaml:18: models\.gpt-4o-mini\.deployments\.0 needs 'name'/],
      [withLine(17, '    deployments: [oops'), ENV, /deployments\.yaml:17: /],
      [withLine(8, '      apiKey: "EAST KEY"'), ENV, /deployments\.yaml:8: providers\.openai-east\.credentials\.apiKey must match pattern/],
    ];
    for (const [text, env, message] of cases) expect(refusal(text, env).message).to.match(message);
  });

  it('stops the registry from being built, naming the file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deployments-file-'));
    try {
      const file = path.join(dir, 'deployments.yaml');
      fs.writeFileSync(file, withLine(20, '        weight: zero'));
      expect(() => providersFromEnv({ ...ENV, GATEWAY_DEPLOYMENTS_FILE: file })).to.throw(DeploymentsFileError, `${file}:20: `);
      expect(() => providersFromEnv({ ...ENV, GATEWAY_DEPLOYMENTS_FILE: path.join(dir, 'missing.yaml') })).to.throw(DeploymentsFileError, /missing\.yaml: cannot be read \(ENOENT\)/);
      // A provider instance without what its family needs (Azure's endpoint) is refused where it is declared.
      fs.writeFileSync(file, 'providers:\n  az:\n    host: azure\nmodels:\n  gpt-4o:\n    deployments: [{ name: a, provider: az }]\n');
      expect(() => providersFromEnv({ GATEWAY_DEPLOYMENTS_FILE: file })).to.throw(DeploymentsFileError, `${file}:2: the provider 'az' is not configured`);
      // A deployment naming a host directly uses the host's credentials from the environment: none, refused.
      fs.writeFileSync(file, 'models:\n  gpt-4o:\n    deployments:\n      - { name: a, provider: groq }\n');
      expect(() => providersFromEnv({ GATEWAY_DEPLOYMENTS_FILE: file })).to.throw(DeploymentsFileError, `${file}:4: the host 'groq' has no credentials in the environment`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('orders deployments by weight, by calls in flight, or by recent latency', () => {
    const deployments = [{ name: 'a', weight: 1 }, { name: 'b', weight: 3 }];
    // The first pick follows the weights: a draw in the first quarter of the total picks `a`.
    expect(deploymentOrder(deployments, 'weighted', idle, () => 0.2).map((d) => d.name)).to.deep.equal(['a', 'b']);
    expect(deploymentOrder(deployments, 'weighted', idle, () => 0.3).map((d) => d.name)).to.deep.equal(['b', 'a']);
    const busy = (name: string) => ({ inFlight: name === 'b' ? 4 : 1, latencyMs: name === 'b' ? 100 : 900 });
    expect(deploymentOrder(deployments, 'least-busy', busy).map((d) => d.name)).to.deep.equal(['a', 'b']);
    expect(deploymentOrder(deployments, 'lowest-latency', busy).map((d) => d.name)).to.deep.equal(['b', 'a']);
    // One never measured goes first, so that it is measured.
    const unmeasured = (name: string) => ({ inFlight: 0, latencyMs: name === 'a' ? null : 100 });
    expect(deploymentOrder(deployments, 'lowest-latency', unmeasured).map((d) => d.name)).to.deep.equal(['a', 'b']);
  });
});

const idle = () => ({ inFlight: 0, latencyMs: null });
