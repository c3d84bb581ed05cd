import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../config/env';

describe('config: workspaces\' own provider keys (BYOK_KEY_RING, BYOK_FEE_PERCENT)', () => {
  const k2 = randomBytes(32);
  const k1 = randomBytes(32);
  const ring = `k2:${k2.toString('base64')}, k1:${k1.toString('base64')}`;

  it('is off without a key ring', () => {
    expect(loadConfig({}).byok).to.equal(undefined);
  });

  it('reads the ring newest first and the fee as exact basis points (default 0)', () => {
    expect(loadConfig({ BYOK_KEY_RING: ring }).byok).to.deep.equal({ keyRing: [{ id: 'k2', key: k2 }, { id: 'k1', key: k1 }], feeBasisPoints: 0 });
    expect(loadConfig({ BYOK_KEY_RING: ring, BYOK_FEE_PERCENT: '2.5' }).byok?.feeBasisPoints).to.equal(250);
    expect(loadConfig({ BYOK_KEY_RING: ring, BYOK_FEE_PERCENT: '0.01' }).byok?.feeBasisPoints).to.equal(1);
    expect(loadConfig({ BYOK_KEY_RING: ring, BYOK_FEE_PERCENT: '100' }).byok?.feeBasisPoints).to.equal(10_000);
  });

  it('refuses malformed rings and fees at boot', () => {
    const bad: NodeJS.ProcessEnv[] = [
      { BYOK_KEY_RING: `k1:${randomBytes(16).toString('base64')}` },
      { BYOK_KEY_RING: `k1:${k1.toString('base64')},k1:${k2.toString('base64')}` },
      { BYOK_KEY_RING: 'not a ring' },
      { BYOK_KEY_RING: ring, BYOK_FEE_PERCENT: '101' },
      { BYOK_KEY_RING: ring, BYOK_FEE_PERCENT: '2.555' },
      { BYOK_KEY_RING: ring, BYOK_FEE_PERCENT: '-1' },
      { BYOK_FEE_PERCENT: '5' },
    ];
    for (const env of bad) expect(() => loadConfig(env), JSON.stringify(env)).to.throw(ConfigError);
  });
});
