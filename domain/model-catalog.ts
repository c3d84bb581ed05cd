/**
 * The model catalog as the running gateway sees it: rows of the `models` table (seeded from the repo's
 * catalog files, overridden by operators), cached in memory and refreshed in the background so that a
 * request never waits on a catalog query.
 */
import type { Knex } from 'knex';
import type { Modality, ModelRecord } from '../catalog/types';

export interface CatalogEntry {
  record: ModelRecord;
  source: 'catalog' | 'operator';
  enabled: boolean;
}

export class ModelCatalog {
  private entries = new Map<string, CatalogEntry>();
  /** Alias -> slug (catalog/types.ts `aliases`); a slug always wins over another record's alias. */
  private aliases = new Map<string, string>();
  private loadedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly db: Knex, private readonly ttlMs = 5_000) {}

  /** An enabled model by slug (or by one of its aliases), or undefined. */
  async get(slug: string): Promise<ModelRecord | undefined> {
    await this.fresh();
    const entry = this.entries.get(slug) ?? this.entries.get(this.aliases.get(slug) ?? '');
    return entry?.enabled ? entry.record : undefined;
  }

  async list(modality?: Modality): Promise<ModelRecord[]> {
    await this.fresh();
    return [...this.entries.values()]
      .filter((e) => e.enabled && (!modality || e.record.modality === modality))
      .map((e) => e.record)
      .sort((a, b) => a.slug.localeCompare(b.slug));
  }

  /** Forces the next read to reload (after an operator change in this process). */
  invalidate(): void {
    this.loadedAt = 0;
  }

  async reload(): Promise<void> {
    const rows = await this.db('models').select('slug', 'record', 'source', 'enabled');
    const next = new Map<string, CatalogEntry>();
    for (const row of rows) next.set(row.slug, { record: row.record, source: row.source, enabled: row.enabled });
    const aliases = new Map<string, string>();
    for (const [slug, entry] of next) for (const alias of entry.record.aliases ?? []) if (!next.has(alias)) aliases.set(alias, slug);
    this.entries = next;
    this.aliases = aliases;
    this.loadedAt = Date.now();
  }

  private async fresh(): Promise<void> {
    if (this.loadedAt === 0) {
      this.loading ??= this.reload().finally(() => { this.loading = null; });
      await this.loading;
      return;
    }
    if (Date.now() - this.loadedAt > this.ttlMs && !this.loading) {
      // Stale-while-revalidate: serve what we have, refresh behind the request.
      this.loading = this.reload().catch(() => undefined).finally(() => { this.loading = null; });
    }
  }
}

/**
 * Writes the repo's catalog into the table. Operator rows are never overwritten; catalog rows that left
 * the repo are disabled (not deleted: usage records still name them).
 */
export async function seedCatalog(db: Knex, records: ModelRecord[]): Promise<{ upserted: number; disabled: number }> {
  return db.transaction(async (trx) => {
    const operatorSlugs = new Set((await trx('models').where({ source: 'operator' }).pluck('slug')) as string[]);
    const rows = records
      .filter((r) => !operatorSlugs.has(r.slug))
      .map((r) => ({ slug: r.slug, provider: r.provider, modality: r.modality, record: JSON.stringify(r), source: 'catalog', enabled: true, updated_at: trx.fn.now() }));
    for (let i = 0; i < rows.length; i += 200) {
      await trx('models').insert(rows.slice(i, i + 200)).onConflict('slug').merge(['provider', 'modality', 'record', 'enabled', 'updated_at']);
    }
    const disabled = await trx('models')
      .where({ source: 'catalog', enabled: true })
      .whereNotIn('slug', records.map((r) => r.slug))
      .update({ enabled: false, updated_at: trx.fn.now() });
    return { upserted: rows.length, disabled };
  });
}

/** Adds or overrides one model as an operator (kept across catalog reseeds). */
export async function upsertOperatorModel(db: Knex, record: ModelRecord): Promise<void> {
  await db('models')
    .insert({ slug: record.slug, provider: record.provider, modality: record.modality, record: JSON.stringify(record), source: 'operator', enabled: true, updated_at: db.fn.now() })
    .onConflict('slug').merge();
}

export async function setModelEnabled(db: Knex, slug: string, enabled: boolean): Promise<boolean> {
  const count = await db('models').where({ slug }).update({ enabled, source: 'operator', updated_at: db.fn.now() });
  return count > 0;
}
