import { expect } from 'chai';
import { ObjectStorage, TRANSIENT_PREFIXES } from '../../infra/storage';
import { getSharedStack } from '../support/stack';

describe('infra/storage', function () {
  this.timeout(120_000);

  it('creates its bucket with expiry for per-request objects only', async () => {
    const stack = await getSharedStack();
    const storage = new ObjectStorage({ ...stack.s3, bucket: `lifecycle-${process.pid}` });
    await storage.ensureBucket();
    await storage.ensureBucket(); // idempotent
    const rules = await storage.lifecycleRules();
    expect(rules.sort((a, b) => a.prefix.localeCompare(b.prefix))).to.deep.equal([...TRANSIENT_PREFIXES].sort((a, b) => a.prefix.localeCompare(b.prefix)));
    expect(rules.map((r) => r.prefix)).not.to.include.members(['files/', 'videos/']);
  });
});
