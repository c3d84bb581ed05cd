import { expect } from 'chai';
import { ctx, simulated, upstreamFailure } from './support';

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);

describe('simulated provider: embeddings', () => {
  const embed = simulated().embedding!('sim-embed');

  it('returns one 256-dimension unit vector per input, deterministically', async () => {
    const result = await embed.doEmbed({ input: ['first text', 'second text'] }, ctx());
    expect(result.embeddings).to.have.length(2);
    for (const vector of result.embeddings) {
      expect(vector).to.have.length(256);
      expect(Math.hypot(...vector)).to.be.closeTo(1, 1e-9);
    }
    expect((await embed.doEmbed({ input: ['first text'] }, ctx())).embeddings[0]).to.deep.equal(result.embeddings[0]);
    expect(result.usage.inputTokens).to.equal(Math.ceil(10 / 4) + Math.ceil(11 / 4));
  });

  it('honours dimensions, still as unit vectors', async () => {
    const result = await embed.doEmbed({ input: ['short'], dimensions: 64 }, ctx());
    expect(result.embeddings[0]).to.have.length(64);
    expect(Math.hypot(...result.embeddings[0])).to.be.closeTo(1, 1e-9);
  });

  it('puts texts that share words closer than unrelated ones', async () => {
    const [cat, cats, bond] = (await embed.doEmbed({ input: ['the cat sat on the mat', 'a cat sat on a mat', 'quarterly bond yields rose sharply'] }, ctx())).embeddings;
    expect(dot(cat, cats)).to.be.greaterThan(dot(cat, bond) + 0.3);
  });

  it('refuses more dimensions than the model has', async () => {
    const err = await upstreamFailure(() => embed.doEmbed({ input: ['x'], dimensions: 512 }, ctx()));
    expect(err.kind).to.equal('caller_error');
  });
});
