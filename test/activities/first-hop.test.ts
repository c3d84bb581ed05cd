import { expect } from 'chai';
import { FirstHops, FirstHopStopped, type FirstHopControl } from '../../activities/first-hop';

/** A first hop's work as a script: it records how far it got, and waits at its gate before its last step. */
function scriptedHop(steps: string[], opts: { failBeforeGate?: Error } = {}) {
  return async ({ gate, signal }: FirstHopControl): Promise<string> => {
    steps.push('held');
    if (opts.failBeforeGate) throw opts.failBeforeGate;
    signal.addEventListener('abort', () => steps.push('aborted'));
    steps.push('called');
    await gate();
    steps.push('settled');
    return 'answer';
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('first hops begun while their runs start', () => {
  const released: string[] = [];
  const hops = () => new FirstHops({ release: async (id, reason) => { released.push(`${id}: ${reason}`); }, timings: { unclaimedMs: 200, endedMs: 200 } });
  beforeEach(() => { released.length = 0; });

  it('go past their gate once the run is confirmed here, and the hop activity claims the same outcome', async () => {
    const registry = hops();
    const steps: string[] = [];
    const hop = registry.begin('req-1:0', 'model-a', 'serveHop', null, scriptedHop(steps));
    await tick();
    expect(steps).to.deep.equal(['held', 'called']);
    hop.confirm();
    expect(await hop.outcome).to.equal('answer');
    const claimed = registry.claim<string, null>('req-1:0', 'model-a');
    expect(claimed).to.equal(hop);
    expect(await claimed!.outcome).to.equal('answer');
    expect(registry.claim('req-1:0', 'model-a'), 'claimed once').to.equal(null);
    expect(steps).to.deep.equal(['held', 'called', 'settled']);
    expect(released).to.deep.equal([]);
  });

  it('go past their gate when the hop activity claims them first (a run not started eagerly)', async () => {
    const registry = hops();
    const steps: string[] = [];
    registry.begin('req-2:0', 'model-a', 'serveHop', null, scriptedHop(steps));
    await tick();
    const claimed = registry.claim<string, null>('req-2:0', 'model-a');
    expect(await claimed!.outcome).to.equal('answer');
    expect(steps).to.deep.equal(['held', 'called', 'settled']);
  });

  it('are not claimed by a hop of another model: that activity runs its hop itself', () => {
    const registry = hops();
    registry.begin('req-3:0', 'model-a', 'serveHop', null, scriptedHop([]));
    expect(registry.claim('req-3:0', 'model-b')).to.equal(null);
    expect(registry.claim('req-3:0', 'model-a')).to.not.equal(null);
  });

  it('stop at their gate when their run was not started, abort what they wait on, and give the hold back after', async () => {
    const registry = hops();
    const steps: string[] = [];
    const hop = registry.begin('req-4:0', 'model-a', 'serveHop', null, scriptedHop(steps));
    await tick();
    hop.abandon('its run could not be started');
    const err = await hop.outcome.then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(FirstHopStopped);
    await tick();
    expect(steps).to.deep.equal(['held', 'called', 'aborted']);
    expect(released).to.deep.equal(['req-4:0: its run could not be started']);
    expect(registry.claim('req-4:0', 'model-a')).to.equal(null);
  });

  it('stop without settling when their run ends without them (the call is aborted; the hold is left to the run)', async () => {
    const registry = hops();
    const steps: string[] = [];
    let answer!: () => void;
    const hop = registry.begin('req-8:0', 'model-a', 'serveHop', null, async ({ gate, signal }) => {
      steps.push('held');
      // A slow model: it answers when asked to, or gives up when aborted.
      await new Promise<void>((resolve, reject) => { answer = resolve; signal.addEventListener('abort', () => reject(signal.reason as Error)); });
      steps.push('called');
      await gate();
      steps.push('settled');
      return 'answer';
    });
    hop.confirm();
    await tick();
    hop.stop('its run was terminated');
    answer();
    expect(await hop.outcome.then(() => null, (e: unknown) => e)).to.be.instanceOf(FirstHopStopped);
    expect(steps).to.deep.equal(['held']);
    expect(released).to.deep.equal([]);
    expect(registry.claim('req-8:0', 'model-a')).to.equal(null);
  });

  it('hand a failure before their gate to the activity that claims them, as it would have thrown it', async () => {
    const registry = hops();
    const failure = new Error('upstream said 503');
    registry.begin('req-5:0', 'model-a', 'serveHop', null, scriptedHop([], { failBeforeGate: failure }));
    await tick();
    const claimed = registry.claim<string, null>('req-5:0', 'model-a');
    expect(await claimed!.outcome.then(() => null, (e: unknown) => e)).to.equal(failure);
  });

  it('are dropped when nobody confirms or claims them, stopping at the gate with their hold left to their run', async () => {
    const registry = hops();
    const steps: string[] = [];
    const hop = registry.begin('req-6:0', 'model-a', 'serveHop', null, scriptedHop(steps));
    const err = await hop.outcome.then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(FirstHopStopped);
    expect(steps).to.deep.equal(['held', 'called', 'aborted']);
    expect(registry.size).to.equal(0);
    expect(released, 'the hold is its run\'s (or the sweeper\'s)').to.deep.equal([]);
  });

  it('stay claimable while a confirmed hop goes on, and go once it ended and nobody came', async () => {
    const registry = hops();
    let finish!: () => void;
    const hop = registry.begin('req-7:0', 'model-a', 'serveHop', null, async ({ gate }) => {
      await gate();
      await new Promise<void>((r) => { finish = r; });
      return 'streamed';
    });
    hop.confirm();
    await new Promise((r) => setTimeout(r, 300));
    expect(registry.size, 'a long stream is still there to claim').to.equal(1);
    finish();
    expect(await hop.outcome).to.equal('streamed');
    await new Promise((r) => setTimeout(r, 300));
    expect(registry.size).to.equal(0);
  });
});
