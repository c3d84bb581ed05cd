/**
 * Many deployments per model: the operator's file (GATEWAY_DEPLOYMENTS_FILE, YAML or JSON) declaring
 * provider instances and, per catalog model, the deployments that serve it (a provider instance, the
 * upstream model or deployment name there, a weight, its own rpm/tpm limits), and how one is chosen.
 *
 * The file never holds a secret: a provider instance names the environment variables its credentials are
 * read from, and a variable named but unset stops the boot. Every mistake is reported with the file and the
 * line it is on. Without the file every model has its one implicit deployment (its catalog provider, as
 * configured from the environment).
 *
 * The order deployments are tried in, and the state shared by every process (cool-downs, per-minute
 * counts), are here too; the call through them is endpoints/model-adapter.ts.
 */
import Ajv, { type ErrorObject } from 'ajv';
import fs from 'node:fs';
import { isMap, isNode, isPair, isScalar, LineCounter, parseDocument, type Document } from 'yaml';

export type RoutingStrategy = 'weighted' | 'least-busy' | 'lowest-latency';

/** A provider instance as declared: a host of providers/registry.ts with its own address and credentials. */
export interface ProviderInstanceSpec {
  name: string;
  /** A host id of providers/registry.ts (`openai`, `azure`, `anthropic`, ...): its wire family and defaults. */
  host: string;
  baseUrl?: string;
  timeoutMs?: number;
  /** Option name → the environment variable holding it (`apiKey: OPENAI_EAST_KEY`). */
  credentials: Record<string, string>;
  /** Family options that are not secret (Azure's `apiVersion`, a cloud's `region`). */
  options: Record<string, string | number | boolean>;
  line: number;
}

export interface DeploymentSpec {
  /** Unique in the file: what usage records and receipts name, and the key of its shared state. */
  name: string;
  /** A provider instance of the file, or a host id (then its credentials come from the host's usual variables). */
  provider: string;
  /** The model or deployment name upstream; absent: the catalog record's `upstreamId`. */
  upstreamModel?: string;
  weight: number;
  rpm?: number;
  tpm?: number;
  line: number;
}

export interface ModelDeploymentsSpec {
  model: string;
  routing: RoutingStrategy;
  cooldownMs: number;
  deployments: DeploymentSpec[];
  line: number;
}

export interface DeploymentsFile {
  path: string;
  providers: Map<string, ProviderInstanceSpec>;
  models: Map<string, ModelDeploymentsSpec>;
}

/** How long a deployment that answered 429, 5xx or timed out is skipped, unless the file says otherwise. */
export const DEFAULT_COOLDOWN_SECONDS = 60;

/** A mistake in the deployments file, naming the file and the line. */
export class DeploymentsFileError extends Error {
  constructor(readonly path: string, readonly line: number | null, detail: string) {
    super(`${path}${line ? `:${line}` : ''}: ${detail}`);
    this.name = 'DeploymentsFileError';
  }
}

const NAME = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', maxLength: 100 };
const ENV_NAME = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };
const POSITIVE_INT = { type: 'integer', minimum: 1 };

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cooldownSeconds: { type: 'number', exclusiveMinimum: 0 },
    providers: {
      type: 'object',
      propertyNames: NAME,
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['host'],
        properties: {
          host: { type: 'string' },
          baseUrl: { type: 'string', pattern: '^https?://' },
          timeoutMs: POSITIVE_INT,
          credentials: { type: 'object', additionalProperties: ENV_NAME },
          options: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
        },
      },
    },
    models: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['deployments'],
        properties: {
          routing: { enum: ['weighted', 'least-busy', 'lowest-latency'] },
          cooldownSeconds: { type: 'number', exclusiveMinimum: 0 },
          deployments: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'provider'],
              properties: {
                name: NAME,
                provider: { type: 'string' },
                model: { type: 'string', minLength: 1 },
                weight: { type: 'number', exclusiveMinimum: 0 },
                rpm: POSITIVE_INT,
                tpm: POSITIVE_INT,
              },
            },
          },
        },
      },
    },
  },
  required: ['models'],
} as const;

const validate = new Ajv({ allErrors: true, strict: false }).compile(SCHEMA);

interface RawFile {
  cooldownSeconds?: number;
  providers?: Record<string, { host: string; baseUrl?: string; timeoutMs?: number; credentials?: Record<string, string>; options?: Record<string, string | number | boolean> }>;
  models: Record<string, { routing?: RoutingStrategy; cooldownSeconds?: number; deployments: Array<{ name: string; provider: string; model?: string; weight?: number; rpm?: number; tpm?: number }> }>;
}

/**
 * Reads and checks the deployments file: its syntax, its shape, that every deployment names a provider
 * instance or a known host, that names are unique, and that every credential variable is set in `env`.
 * `hosts`: the host ids the registry knows. Throws a DeploymentsFileError naming the line.
 */
export function loadDeploymentsFile(path: string, env: NodeJS.ProcessEnv, hosts: ReadonlySet<string>): DeploymentsFile {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new DeploymentsFileError(path, null, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseDeployments(text, path, env, hosts);
}

export function parseDeployments(text: string, path: string, env: NodeJS.ProcessEnv, hosts: ReadonlySet<string>): DeploymentsFile {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) throw new DeploymentsFileError(path, lines.linePos(syntax.pos[0]).line, syntax.message.split('\n')[0]);
  const raw = doc.toJS() as unknown;
  const lineOf = (at: Array<string | number>, key = false) => nodeLine(doc, lines, at, key);
  if (!validate(raw)) {
    const err = (validate.errors ?? [])[0] as ErrorObject;
    const at = pointerPath(err.instancePath);
    if (err.keyword === 'additionalProperties') {
      const extra = String((err.params as { additionalProperty: string }).additionalProperty);
      throw new DeploymentsFileError(path, lineOf([...at, extra], true), `unknown field '${extra}'${at.length ? ` in ${at.join('.')}` : ''}`);
    }
    if (err.keyword === 'propertyNames') {
      const bad = String((err.params as { propertyName: string }).propertyName);
      throw new DeploymentsFileError(path, lineOf([...at, bad], true), `'${bad}' is not a valid name (letters, digits, . _ : -)`);
    }
    if (err.keyword === 'required') {
      const missing = String((err.params as { missingProperty: string }).missingProperty);
      throw new DeploymentsFileError(path, lineOf(at), `${at.length ? at.join('.') : 'the file'} needs '${missing}'`);
    }
    const allowed = err.keyword === 'enum' ? ` (one of ${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : '';
    throw new DeploymentsFileError(path, lineOf(at), `${at.join('.') || 'the file'} ${err.message ?? 'is invalid'}${allowed}`);
  }
  const file = raw as RawFile;
  const defaultCooldown = file.cooldownSeconds ?? DEFAULT_COOLDOWN_SECONDS;

  const providers = new Map<string, ProviderInstanceSpec>();
  for (const [name, p] of Object.entries(file.providers ?? {})) {
    if (!hosts.has(p.host)) throw new DeploymentsFileError(path, lineOf(['providers', name, 'host']), `unknown host '${p.host}' (known: ${[...hosts].join(', ')})`);
    for (const [option, variable] of Object.entries(p.credentials ?? {})) {
      if (!env[variable]) throw new DeploymentsFileError(path, lineOf(['providers', name, 'credentials', option]), `the environment variable ${variable} (${name}'s ${option}) is not set`);
    }
    providers.set(name, {
      name, host: p.host, baseUrl: p.baseUrl, timeoutMs: p.timeoutMs, credentials: p.credentials ?? {}, options: p.options ?? {}, line: lineOf(['providers', name], true) ?? 0,
    });
  }

  const models = new Map<string, ModelDeploymentsSpec>();
  const names = new Map<string, number>();
  for (const [model, m] of Object.entries(file.models)) {
    const deployments = m.deployments.map((d, i): DeploymentSpec => {
      const line = lineOf(['models', model, 'deployments', i]) ?? 0;
      const seen = names.get(d.name);
      if (seen !== undefined) throw new DeploymentsFileError(path, line, `the deployment name '${d.name}' is already used on line ${seen}`);
      names.set(d.name, line);
      if (!providers.has(d.provider) && !hosts.has(d.provider)) {
        throw new DeploymentsFileError(path, lineOf(['models', model, 'deployments', i, 'provider']), `'${d.provider}' is neither a provider of this file nor a known host`);
      }
      return { name: d.name, provider: d.provider, upstreamModel: d.model, weight: d.weight ?? 1, rpm: d.rpm, tpm: d.tpm, line };
    });
    models.set(model, {
      model, routing: m.routing ?? 'weighted', cooldownMs: Math.round((m.cooldownSeconds ?? defaultCooldown) * 1000), deployments, line: lineOf(['models', model], true) ?? 0,
    });
  }
  return { path, providers, models };
}

/** `/models/gpt-4o/deployments/0/weight` → ['models', 'gpt-4o', 'deployments', 0, 'weight']. */
function pointerPath(pointer: string): Array<string | number> {
  if (!pointer) return [];
  return pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** The line of the node at `at` (of its key when `key`), or of its nearest ancestor present in the file. */
function nodeLine(doc: Document, lines: LineCounter, at: Array<string | number>, key: boolean): number | null {
  for (let depth = at.length; depth >= 0; depth--) {
    const parentPath = at.slice(0, Math.max(0, depth - 1));
    if (depth > 0 && (key || depth < at.length)) {
      const parent = parentPath.length ? doc.getIn(parentPath, true) : doc.contents;
      if (isMap(parent)) {
        const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(at[depth - 1]));
        if (pair && isNode(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
      }
    }
    const node = depth === 0 ? doc.contents : doc.getIn(at.slice(0, depth), true);
    if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
  }
  return null;
}

/** The shared state of deployments: what every process routing to them must see alike. */
export interface DeploymentState {
  /** Until when (epoch ms) each named deployment cools down; 0 for one that is serving. */
  coolingUntil(names: string[]): Promise<number[]>;
  /** Takes `name` out of rotation for `ms` (a later, longer cool-down wins over a shorter one). */
  coolDown(name: string, ms: number): Promise<void>;
  /** Counts one request in `name`'s current minute and returns the minute's count. */
  countRequest(name: string, now?: number): Promise<number>;
  /** Tokens `name` used in the current minute. */
  tokensUsed(name: string, now?: number): Promise<number>;
  addTokens(name: string, tokens: number, now?: number): Promise<void>;
}

export const MINUTE_MS = 60_000;

/** The state of one process alone (a registry used without the shared store: tests, tools). */
export class LocalDeploymentState implements DeploymentState {
  private readonly cooling = new Map<string, number>();
  private readonly counts = new Map<string, number>();

  async coolingUntil(names: string[]): Promise<number[]> {
    return names.map((n) => this.cooling.get(n) ?? 0);
  }

  async coolDown(name: string, ms: number): Promise<void> {
    this.cooling.set(name, Math.max(this.cooling.get(name) ?? 0, Date.now() + ms));
  }

  async countRequest(name: string, now = Date.now()): Promise<number> {
    return this.add(`${name}:rpm:${Math.floor(now / MINUTE_MS)}`, 1);
  }

  async tokensUsed(name: string, now = Date.now()): Promise<number> {
    return this.counts.get(`${name}:tpm:${Math.floor(now / MINUTE_MS)}`) ?? 0;
  }

  async addTokens(name: string, tokens: number, now = Date.now()): Promise<void> {
    this.add(`${name}:tpm:${Math.floor(now / MINUTE_MS)}`, tokens);
  }

  private add(key: string, n: number): number {
    const count = (this.counts.get(key) ?? 0) + n;
    this.counts.set(key, count);
    return count;
  }
}

/** What the order of a model's deployments is chosen from (per process: requests in flight, recent latency). */
export interface DeploymentLoad {
  inFlight: number;
  /** Moving average of successful calls' latency (ms); null before the first. */
  latencyMs: number | null;
}

/**
 * The order to try a model's deployments in: `weighted` draws without replacement in proportion to the
 * weights (so the first pick follows the weights and the others stand behind it); `least-busy` takes
 * the fewest requests in flight first, `lowest-latency` the fastest recent answers first (one never
 * measured first, so each is measured), ties broken by weight.
 */
export function deploymentOrder<D extends { name: string; weight: number }>(
  deployments: D[], routing: RoutingStrategy, load: (name: string) => DeploymentLoad, random: () => number = Math.random,
): D[] {
  const weighted = drawWeighted(deployments, random);
  if (routing === 'weighted') return weighted;
  const rank = new Map(weighted.map((d, i) => [d.name, i]));
  const key = (d: D) => (routing === 'least-busy' ? load(d.name).inFlight : (load(d.name).latencyMs ?? -1));
  return [...deployments].sort((a, b) => key(a) - key(b) || rank.get(a.name)! - rank.get(b.name)!);
}

function drawWeighted<D extends { weight: number }>(deployments: D[], random: () => number): D[] {
  const left = [...deployments];
  const out: D[] = [];
  while (left.length) {
    let pick = random() * left.reduce((sum, d) => sum + d.weight, 0);
    let i = 0;
    while (i < left.length - 1 && pick >= left[i].weight) pick -= left[i++].weight;
    out.push(left.splice(i, 1)[0]);
  }
  return out;
}

/** One deployment as the registry built it: its provider instance, ready to bind to the upstream model. */
export interface Deployment<P = unknown> {
  name: string;
  provider: P;
  upstreamModel?: string;
  weight: number;
  rpm?: number;
  tpm?: number;
}

export interface ModelDeployments<P = unknown> {
  model: string;
  /** Where the model is declared in the file (the boot's catalog check names it). */
  line?: number;
  routing: RoutingStrategy;
  cooldownMs: number;
  deployments: Deployment<P>[];
}

/** Weight of the latest call in the moving average of a deployment's latency. */
const LATENCY_SMOOTHING = 0.3;

/**
 * The declared deployments of a registry, with the state they are routed by: the shared one (cool-downs,
 * per-minute counts; in Redis or Postgres once the runtime plugs it in, else this process's own) and this
 * process's load (requests in flight, recent latency), which least-busy and lowest-latency read.
 */
export class Deployments<P = unknown> {
  private stateStore: DeploymentState = new LocalDeploymentState();
  private readonly loads = new Map<string, DeploymentLoad>();

  constructor(readonly path: string, private readonly models: Map<string, ModelDeployments<P>>) {}

  of(model: string): ModelDeployments<P> | null {
    return this.models.get(model) ?? null;
  }

  get modelIds(): string[] {
    return [...this.models.keys()];
  }

  get state(): DeploymentState {
    return this.stateStore;
  }

  /** Shares cool-downs and limits with every process using the same store (main/runtime.ts). */
  useState(state: DeploymentState): void {
    this.stateStore = state;
  }

  load(name: string): DeploymentLoad {
    let load = this.loads.get(name);
    if (!load) this.loads.set(name, (load = { inFlight: 0, latencyMs: null }));
    return load;
  }

  /** Marks a call begun on `name`; the returned function marks it ended (with its latency when it answered). */
  begin(name: string): (answeredInMs: number | null) => void {
    const load = this.load(name);
    load.inFlight++;
    return (ms) => {
      load.inFlight--;
      if (ms !== null) load.latencyMs = load.latencyMs === null ? ms : load.latencyMs + LATENCY_SMOOTHING * (ms - load.latencyMs);
    };
  }
}
