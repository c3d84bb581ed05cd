/**
 * The state deployments are routed by (providers/deployments.ts), shared by every API and worker process:
 * which deployments cool down and until when, and each one's requests and tokens in the current minute
 * (its rpm/tpm limits).
 *
 * In Redis when `REDIS_URL` is set, else in Postgres (`deployment_cooldowns`, and the window counters'
 * table `rate_limit_counters`). As with the window counters (domain/redis-counters.ts), a Redis that fails
 * a command sends this process to Postgres for `retryAfterMs`: routing never waits on Redis and never
 * fails for it. A switch between the stores forgets what the other one held (a cool-down may end early, a
 * minute's count start over), which costs at most one more failed call per deployment.
 */
import type { Knex } from 'knex';
import type { Logger } from '../core/log';
import type { RedisCounterClient } from '../infra/redis';
import { DeploymentsFileError, MINUTE_MS, type Deployments, type DeploymentState } from '../providers/deployments';
import type { ModelCatalog } from './model-catalog';
import { currentWindow, hitWindow } from './rate-limits';

/**
 * Every model of the deployments file is one of the catalog, by its own id (not an alias), and not a video
 * model (a video is polled where it was submitted, so it keeps its one deployment): else the boot stops,
 * naming the line.
 */
export async function checkDeployedModels(deployments: Deployments, catalog: Pick<ModelCatalog, 'get'>): Promise<void> {
  for (const model of deployments.modelIds) {
    const line = deployments.of(model)?.line ?? null;
    const record = await catalog.get(model);
    if (!record) throw new DeploymentsFileError(deployments.path, line, `'${model}' is not a model of the catalog`);
    if (record.slug !== model) throw new DeploymentsFileError(deployments.path, line, `'${model}' is an alias: name the model '${record.slug}'`);
    if (record.modality === 'video') throw new DeploymentsFileError(deployments.path, line, `'${model}' is a video model: a video is polled where it was submitted, so it keeps its one deployment`);
  }
}

export class PostgresDeploymentState implements DeploymentState {
  constructor(private readonly db: Knex) {}

  async coolingUntil(names: string[]): Promise<number[]> {
    if (names.length === 0) return [];
    const rows: Array<{ deployment: string; until_ms: string }> = await this.db('deployment_cooldowns').whereIn('deployment', names);
    const until = new Map(rows.map((r) => [r.deployment, Number(r.until_ms)]));
    return names.map((n) => until.get(n) ?? 0);
  }

  async coolDown(name: string, ms: number): Promise<void> {
    await this.db.raw(
      `insert into deployment_cooldowns (deployment, until_ms) values (?, ?)
       on conflict (deployment) do update set until_ms = greatest(deployment_cooldowns.until_ms, excluded.until_ms)`,
      [name, Date.now() + ms],
    );
  }

  async countRequest(name: string, now = Date.now()): Promise<number> {
    return (await hitWindow(this.db, rpmBucket(name), MINUTE_MS, Number.MAX_SAFE_INTEGER, now)).count;
  }

  async tokensUsed(name: string, now = Date.now()): Promise<number> {
    const row = await this.db('rate_limit_counters').where({ bucket: tpmBucket(name), window_start: currentWindow(MINUTE_MS, now).start }).first('count');
    return Number(row?.count ?? 0);
  }

  async addTokens(name: string, tokens: number, now = Date.now()): Promise<void> {
    await this.db.raw(
      `insert into rate_limit_counters (bucket, window_start, count) values (?, ?, ?)
       on conflict (bucket, window_start) do update set count = rate_limit_counters.count + excluded.count`,
      [tpmBucket(name), currentWindow(MINUTE_MS, now).start, Math.round(tokens)],
    );
  }
}

export class RedisDeploymentState implements DeploymentState {
  private avoidUntil = 0;

  constructor(
    private readonly redis: RedisCounterClient,
    private readonly fallback: DeploymentState,
    private readonly opts: { retryAfterMs?: number; log?: Logger } = {},
  ) {}

  coolingUntil(names: string[]): Promise<number[]> {
    return this.either(() => this.redis.numbers(names.map(cooldownKey)), () => this.fallback.coolingUntil(names));
  }

  coolDown(name: string, ms: number): Promise<void> {
    return this.either(() => this.redis.extendDeadline(cooldownKey(name), Date.now() + ms), () => this.fallback.coolDown(name, ms));
  }

  countRequest(name: string, now = Date.now()): Promise<number> {
    const { start, resetMs } = currentWindow(MINUTE_MS, now);
    return this.either(() => this.redis.increment(`${rpmBucket(name)}:${start}`, resetMs + MINUTE_MS), () => this.fallback.countRequest(name, now));
  }

  tokensUsed(name: string, now = Date.now()): Promise<number> {
    const { start } = currentWindow(MINUTE_MS, now);
    return this.either(async () => (await this.redis.numbers([`${tpmBucket(name)}:${start}`]))[0], () => this.fallback.tokensUsed(name, now));
  }

  addTokens(name: string, tokens: number, now = Date.now()): Promise<void> {
    const { start, resetMs } = currentWindow(MINUTE_MS, now);
    return this.either(async () => { await this.redis.add(`${tpmBucket(name)}:${start}`, tokens, resetMs + MINUTE_MS); }, () => this.fallback.addTokens(name, tokens, now));
  }

  private async either<T>(redis: () => Promise<T>, postgres: () => Promise<T>): Promise<T> {
    if (this.redis.ready && Date.now() >= this.avoidUntil) {
      try {
        return await redis();
      } catch (err) {
        this.avoidUntil = Date.now() + (this.opts.retryAfterMs ?? 5000);
        this.opts.log?.warn({ err: (err as Error).message }, 'Redis (deployment state) failed: routing by Postgres for now');
      }
    }
    return postgres();
  }
}

const cooldownKey = (name: string) => `deployment:cooldown:${name}`;
const rpmBucket = (name: string) => `deployment:rpm:${name}`;
const tpmBucket = (name: string) => `deployment:tpm:${name}`;
