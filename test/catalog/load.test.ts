import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultCatalogDir, loadCatalogFiles } from '../../catalog/load';
import type { ModelRecord } from '../../catalog/types';

function sampleRecord(slug: string): ModelRecord {
  return {
    slug,
    name: 'Sample',
    provider: 'simulated',
    upstreamId: slug,
    modality: 'embedding',
    ownedBy: 'simulated',
    created: 1735732800,
    capabilities: {},
    contextWindow: 8192,
    dimensions: 16,
    pricing: { inputPerMTok: 1 },
    allowedParams: { encoding_format: ['float', 'base64'] },
  };
}

describe('loadCatalogFiles', () => {
  let tmp: string;
  beforeEach(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'catalog-')); });
  afterEach(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

  it('finds catalog/models in the source tree', () => {
    const dir = defaultCatalogDir();
    expect(path.basename(dir)).to.equal('models');
    expect(fs.existsSync(path.join(dir, '..', '..', 'package.json'))).to.equal(true);
  });

  it('loads every record of the repository catalog', () => {
    expect(loadCatalogFiles().length).to.be.within(150, 190);
  });

  it('reads every JSON file of a directory in file-name order', () => {
    fs.writeFileSync(path.join(tmp, 'b.json'), JSON.stringify([sampleRecord('b-model')]));
    fs.writeFileSync(path.join(tmp, 'a.json'), JSON.stringify([sampleRecord('a-model'), sampleRecord('a-model-2')]));
    fs.writeFileSync(path.join(tmp, 'notes.txt'), 'not a catalog file');
    expect(loadCatalogFiles(tmp).map((r) => r.slug)).to.deep.equal(['a-model', 'a-model-2', 'b-model']);
  });

  it('refuses a slug defined twice, naming both files', () => {
    fs.writeFileSync(path.join(tmp, 'a.json'), JSON.stringify([sampleRecord('twice')]));
    fs.writeFileSync(path.join(tmp, 'b.json'), JSON.stringify([sampleRecord('twice')]));
    expect(() => loadCatalogFiles(tmp)).to.throw(/b\.json: duplicate slug 'twice' \(already defined in a\.json\)/);
  });

  it('names the file and slug of an invalid record', () => {
    const bad = { ...sampleRecord('broken'), pricing: { inputPerMTok: -1 } };
    fs.writeFileSync(path.join(tmp, 'bad.json'), JSON.stringify([sampleRecord('fine'), bad]));
    expect(() => loadCatalogFiles(tmp)).to.throw(/bad\.json \(record 1\): Invalid model record 'broken': \/pricing\/inputPerMTok must be >= 0/);
  });

  it('refuses a file that is not an array or not JSON', () => {
    fs.writeFileSync(path.join(tmp, 'object.json'), JSON.stringify(sampleRecord('x')));
    expect(() => loadCatalogFiles(tmp)).to.throw(/object\.json: expected an array of model records/);
    fs.rmSync(path.join(tmp, 'object.json'));
    fs.writeFileSync(path.join(tmp, 'broken.json'), '[{');
    expect(() => loadCatalogFiles(tmp)).to.throw(/broken\.json: not valid JSON/);
  });
});
