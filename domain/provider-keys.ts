/**
 * Workspaces' own provider keys (bring your own key). A key is sealed with the BYOK key ring (AES-256-GCM,
 * the ring key's id stored beside it, the workspace and provider as additional data so a sealed key copied
 * to another workspace's row does not open), shown once when added, then only by its last four characters.
 *
 * A workspace's request for a model of a provider it has a key for is served by a provider instance built
 * with that key (cached per key version, never shared between workspaces) and charged the BYOK fee instead
 * of the model's price; without a key, by the platform's instance at the list price.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { atKeyFee, FULL_PRICE_BASIS_POINTS } from '../catalog/pricing';
import type { ModelRecord } from '../catalog/types';
import type { CodecKey } from '../config/env';
import { newId } from '../core/ids';
import { GatewayError, InternalError, InvalidRequestError, NotFoundError, UpstreamError } from '../core/errors';
import type { ProviderRegistry } from '../providers/registry';
import type { Provider } from '../providers/types';
import { audit } from './audit';
import type { ModelCatalog } from './model-catalog';
import type { KeySource } from './usage-record';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals and opens provider keys with the BYOK key ring: the first key seals, every key opens. */
export class ProviderKeyRing {
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(private readonly keys: readonly CodecKey[]) {
    if (keys.length === 0) throw new InternalError('the BYOK key ring needs at least one key');
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  seal(plain: string, context: string): { keyId: string; sealed: Buffer } {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(`${id}\n${context}`));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return { keyId: id, sealed: Buffer.concat([iv, body, cipher.getAuthTag()]) };
  }

  open(keyId: string, sealed: Buffer, context: string): string {
    const key = this.byId.get(keyId);
    if (!key) throw new InternalError(`a provider key is sealed with ring key '${keyId}', which is not in BYOK_KEY_RING`);
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(`${keyId}\n${context}`));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new InternalError(`a provider key sealed with ring key '${keyId}' failed authentication`);
    }
  }
}

/** What binds a sealed key to its row: it opens only as this workspace's key for this provider. */
const sealContext = (workspaceId: string, provider: string) => `${workspaceId}\n${provider}`;

/** A stored key as shown after it was added: never the key, only its last four characters. */
export interface ProviderKeySummary {
  id: string;
  provider: string;
  lastFour: string;
  createdBy: string | null;
  createdAt: Date;
}

export async function listProviderKeys(db: Knex, workspaceId: string): Promise<ProviderKeySummary[]> {
  const rows = await db('workspace_provider_keys').where({ workspace_id: workspaceId }).orderBy('provider').select('id', 'provider', 'last_four', 'created_by', 'created_at');
  return rows.map((r) => ({ id: r.id, provider: r.provider, lastFour: r.last_four, createdBy: r.created_by, createdAt: new Date(r.created_at) }));
}

/** How a provider's key is checked before it is stored: one tiny call with it (`chat`: 1 output token; `embedding`: one word). */
export interface KeyCheck {
  provider: string;
  model: ModelRecord;
}

/**
 * The providers a workspace may bring a key for: hosts that authenticate with one key (providers/registry.ts)
 * and have a chat or embedding model in the catalog, which a test call can use at a negligible cost.
 */
export async function keyCheckFor(catalog: ModelCatalog, registry: ProviderRegistry, provider: string): Promise<KeyCheck | null> {
  if (!registry.takesOwnKey(provider)) return null;
  const records = (await catalog.list()).filter((r) => r.provider === provider && !r.deprecated);
  const price = (r: ModelRecord) => (r.pricing.inputPerMTok ?? 0) + (r.pricing.outputPerMTok ?? 0);
  const model = records.filter((r) => r.modality === 'chat').sort((a, b) => price(a) - price(b))[0]
    ?? records.find((r) => r.modality === 'embedding');
  return model ? { provider, model } : null;
}

export async function keyProviders(catalog: ModelCatalog, registry: ProviderRegistry): Promise<string[]> {
  const providers = [...new Set((await catalog.list()).map((r) => r.provider))].sort();
  const checks = await Promise.all(providers.map((p) => keyCheckFor(catalog, registry, p)));
  return providers.filter((_, i) => checks[i] !== null);
}

/** The test call: throws a 400 `provider_key_rejected` naming why when the provider refuses the key or cannot be reached. */
export async function testProviderKey(registry: ProviderRegistry, check: KeyCheck, key: string): Promise<void> {
  const provider = registry.withKey(check.provider, key);
  const ctx = { requestId: `keytest_${randomBytes(6).toString('hex')}`, timeoutMs: 20_000 };
  try {
    if (check.model.modality === 'chat') {
      await provider.chat!(check.model.upstreamId).doGenerate({ messages: [{ role: 'user', content: 'Say OK.' }], maxTokens: 1 }, ctx);
    } else {
      await provider.embedding!(check.model.upstreamId).doEmbed({ input: ['ok'] }, ctx);
    }
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const upstream = err instanceof UpstreamError ? err.upstreamStatus : null;
    // Any other refusal of the request itself (400, 404, 422) came after the provider took the key: it works.
    if (err instanceof UpstreamError && err.kind === 'caller_error' && upstream !== 401 && upstream !== 403) return;
    const why = upstream === 401 || upstream === 403 ? `it refused the key (HTTP ${upstream})`
      : upstream === 429 ? 'it answered 429 (the key is rate-limited or out of quota)'
        : upstream ? `it answered HTTP ${upstream}` : 'the provider could not be reached';
    throw new InvalidRequestError(`The key was not saved: a test call to ${check.provider} (${check.model.slug}) failed, ${why}: ${err.message}`, { code: 'provider_key_rejected', param: 'key' });
  }
}

/** Stores the workspace's key for `provider` (replacing any it had: a new version), sealed; audited without the key. */
export async function addProviderKey(db: Knex, ring: ProviderKeyRing, opts: { workspaceId: string; provider: string; key: string; actor: string }): Promise<ProviderKeySummary> {
  const id = newId('pk');
  const { keyId, sealed } = ring.seal(opts.key, sealContext(opts.workspaceId, opts.provider));
  const lastFour = opts.key.slice(-4);
  return db.transaction(async (tx) => {
    await tx('workspace_provider_keys').where({ workspace_id: opts.workspaceId, provider: opts.provider }).delete();
    const [row] = await tx('workspace_provider_keys').insert({
      id, workspace_id: opts.workspaceId, provider: opts.provider, key_id: keyId, sealed, last_four: lastFour, created_by: opts.actor,
    }).returning(['created_at']);
    await audit(tx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'provider_key.add', subjectType: 'provider_key', subjectId: id, data: { provider: opts.provider, last_four: lastFour } });
    return { id, provider: opts.provider, lastFour, createdBy: opts.actor, createdAt: new Date(row.created_at) };
  });
}

/** Removes the workspace's key for `provider`: its requests go back to the platform's key. */
export async function removeProviderKey(db: Knex, opts: { workspaceId: string; provider: string; actor: string }): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx('workspace_provider_keys').where({ workspace_id: opts.workspaceId, provider: opts.provider }).delete().returning(['id', 'last_four']);
    if (!row) throw new NotFoundError(`This workspace has no key of its own for '${opts.provider}'.`, { code: 'provider_key_not_found', param: 'provider' });
    await audit(tx, { workspaceId: opts.workspaceId, actor: opts.actor, action: 'provider_key.remove', subjectType: 'provider_key', subjectId: row.id, data: { provider: opts.provider, last_four: row.last_four } });
  });
}

/** Who serves one workspace's call to a model: the providers to call it through, its record as priced, whose key. */
export interface Serving {
  providers: ProviderRegistry;
  record: ModelRecord;
  keySource: KeySource;
}

/** Provider instances built with workspaces' keys, kept at most this many (the least recently built go first). */
const CACHED_INSTANCES = 500;

/** Resolves which provider instance serves a workspace's call (its own key, else the platform's). */
export class WorkspaceProviderKeys {
  /** Key version (row id) -> the instance built with it, and whose it is. */
  private readonly instances = new Map<string, { workspaceId: string; provider: Provider }>();

  constructor(private readonly db: Knex, private readonly registry: ProviderRegistry, readonly ring: ProviderKeyRing, readonly feeBasisPoints: number) {
    if (!Number.isSafeInteger(feeBasisPoints) || feeBasisPoints < 0 || feeBasisPoints > FULL_PRICE_BASIS_POINTS) throw new InternalError(`BYOK fee out of range: ${feeBasisPoints} basis points`);
  }

  /** The platform's registry: what serves every workspace without a key of its own. */
  get platform(): ProviderRegistry {
    return this.registry;
  }

  async serving(workspaceId: string, record: ModelRecord): Promise<Serving> {
    const row = await this.db('workspace_provider_keys').where({ workspace_id: workspaceId, provider: record.provider }).first('id', 'key_id', 'sealed');
    if (!row) return { providers: this.registry, record, keySource: 'platform' };
    let cached = this.instances.get(row.id);
    if (!cached || cached.workspaceId !== workspaceId) {
      const key = this.ring.open(row.key_id, row.sealed, sealContext(workspaceId, record.provider));
      cached = { workspaceId, provider: this.registry.withKey(record.provider, key) };
      this.instances.set(row.id, cached);
      if (this.instances.size > CACHED_INSTANCES) this.instances.delete(this.instances.keys().next().value!);
    }
    return { providers: this.registry.overriding(cached.provider), record: atKeyFee(record, this.feeBasisPoints), keySource: 'workspace' };
  }
}
