/**
 * Reads the catalog's JSON files (catalog/models/*.json, each an array of model records), validates every
 * record and refuses duplicate slugs. The files stay in the source tree (the compiler does not copy them),
 * so the directory is found by walking up to the project root from the compiled file or the working
 * directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { validateModelRecord } from './record-validation';
import type { ModelRecord } from './types';

export { validateModelRecord } from './record-validation';

const MODELS_DIR = path.join('catalog', 'models');

/** <project root>/catalog/models, where the project root is the nearest folder with package.json and that directory. */
export function defaultCatalogDir(): string {
  for (const start of [__dirname, process.cwd()]) {
    for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, MODELS_DIR);
      if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(candidate)) return candidate;
      if (path.dirname(dir) === dir) break;
    }
  }
  throw new Error(`Cannot find ${MODELS_DIR} above ${__dirname} or ${process.cwd()}`);
}

/** Every record of every JSON file in `dir`, in file-name order. Throws naming the file and slug at fault. */
export function loadCatalogFiles(dir: string = defaultCatalogDir()): ModelRecord[] {
  const files = fs.readdirSync(dir).filter((name) => name.endsWith('.json')).sort();
  const records: ModelRecord[] = [];
  const fileOfSlug = new Map<string, string>();
  for (const file of files) {
    const where = path.join(dir, file);
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(where, 'utf8'));
    } catch (err) {
      throw new Error(`${where}: not valid JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new Error(`${where}: expected an array of model records`);
    parsed.forEach((entry, index) => {
      let record: ModelRecord;
      try {
        record = validateModelRecord(entry);
      } catch (err) {
        throw new Error(`${where} (record ${index}): ${(err as Error).message}`);
      }
      const earlier = fileOfSlug.get(record.slug);
      if (earlier) throw new Error(`${where}: duplicate slug '${record.slug}' (already defined in ${earlier})`);
      fileOfSlug.set(record.slug, file);
      records.push(record);
    });
  }
  return records;
}
