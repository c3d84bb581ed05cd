import { expect } from 'chai';
import { parseModelVariant } from '../../simulator';
import type { CallContext, ChatRequest, Provider } from '../../providers/types';
import { collect, ctx, simulated, upstreamFailure } from './support';

const hello: ChatRequest = { messages: [{ role: 'user', content: 'hello there' }] };

/** One cheap call per modality, on the given upstream id. */
const calls: Record<string, (p: Provider, model: string, c: CallContext) => Promise<unknown>> = {
  chat: (p, m, c) => p.chat!(`sim-chat${m}`).doGenerate(hello, c),
  embedding: (p, m, c) => p.embedding!(`sim-embed${m}`).doEmbed({ input: ['x'] }, c),
  image: (p, m, c) => p.image!(`sim-image${m}`).doGenerate({ prompt: 'x', n: 1, size: '16x16', params: {} }, c),
  speech: (p, m, c) => p.speech!(`sim-tts${m}`).doSynthesize({ input: 'x', voice: 'alloy', format: 'wav', speed: 1 }, c),
  transcription: (p, m, c) => p.transcription!(`sim-transcribe${m}`).doTranscribe({ audio: Buffer.alloc(100), filename: 'x.pcm', mediaType: 'audio/pcm' }, c),
  video: (p, m, c) => p.video!(`sim-video${m}`).doSubmit({ prompt: 'x', n: 1, params: {} }, c),
  music: (p, m, c) => p.music!(`sim-music${m}`).doGenerate({ prompt: 'x', durationSeconds: 1, format: 'wav', params: {} }, c),
};

describe('simulated provider: failure variants and directives', () => {
  it('parses the suffix grammar', () => {
    expect(parseModelVariant('sim-chat')).to.deep.equal({ base: 'sim-chat', failure: null });
    expect(parseModelVariant('sim-chat-fail-429')).to.deep.equal({ base: 'sim-chat', failure: '429' });
    expect(parseModelVariant('sim-video-fail')).to.deep.equal({ base: 'sim-video', failure: '500' });
    expect(parseModelVariant('sim-tts-timeout')).to.deep.equal({ base: 'sim-tts', failure: 'timeout' });
    expect(parseModelVariant('sim-embed-malformed')).to.deep.equal({ base: 'sim-embed', failure: 'malformed' });
  });

  it('is always configured', () => {
    expect(simulated().configured).to.equal(true);
    expect(simulated().family).to.equal('simulated');
  });

  it('-fail-429 is a rate limit with a 1 s retry-after', async () => {
    const err = await upstreamFailure(() => calls.chat(simulated(), '-fail-429', ctx()));
    expect(err).to.include({ kind: 'rate_limited', status: 429, upstreamStatus: 429, retryAfterMs: 1000, retryable: true, provider: 'simulated' });
    expect(err.headers['retry-after']).to.equal('1');
  });

  it('-fail-500 and -fail-503 are retryable server errors', async () => {
    expect(await upstreamFailure(() => calls.chat(simulated(), '-fail-500', ctx()))).to.include({ kind: 'server_error', status: 502, upstreamStatus: 500, retryable: true });
    expect(await upstreamFailure(() => calls.chat(simulated(), '-fail-503', ctx()))).to.include({ kind: 'server_error', status: 503, upstreamStatus: 503, retryable: true });
  });

  it('-malformed is a bad response', async () => {
    expect(await upstreamFailure(() => calls.chat(simulated(), '-malformed', ctx()))).to.include({ kind: 'bad_response', status: 502 });
  });

  it('-timeout never answers: a timeout once ctx.timeoutMs elapses', async () => {
    const started = Date.now();
    const err = await upstreamFailure(() => calls.chat(simulated(), '-timeout', ctx({ timeoutMs: 80 })));
    expect(err).to.include({ kind: 'timeout', status: 504, retryable: true });
    expect(Date.now() - started).to.be.within(70, 1000);
  });

  it('-timeout also ends when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const err = await upstreamFailure(() => calls.chat(simulated(), '-timeout', ctx({ signal: controller.signal })));
    expect(err.kind).to.equal('timeout');
  });

  it('-slow answers after the delay, or times out when the deadline is shorter', async () => {
    const provider = simulated({ slowDelayMs: 120 });
    const started = Date.now();
    await calls.chat(provider, '-slow', ctx());
    expect(Date.now() - started).to.be.at.least(110);
    expect(await upstreamFailure(() => calls.chat(provider, '-slow', ctx({ timeoutMs: 30 })))).to.include({ kind: 'timeout' });
  });

  it('honours the x-simulate-failure directive, including 400 and a custom slow delay', async () => {
    const provider = simulated();
    expect(await upstreamFailure(() => calls.chat(provider, '', ctx({ simulate: { failure: '400' } })))).to.include({ kind: 'caller_error', status: 400, retryable: false });
    expect(await upstreamFailure(() => calls.chat(provider, '', ctx({ simulate: { failure: '429' } })))).to.include({ kind: 'rate_limited' });
    const started = Date.now();
    await calls.chat(provider, '', ctx({ simulate: { failure: 'slow', delayMs: 60 } }));
    expect(Date.now() - started).to.be.at.least(55);
  });

  it('fails only the first failTimes attempts', async () => {
    const provider = simulated();
    const simulate = (attempt: number) => ctx({ simulate: { failure: '503', failTimes: 2, attempt } });
    await upstreamFailure(() => calls.chat(provider, '', simulate(1)));
    await upstreamFailure(() => calls.chat(provider, '', simulate(2)));
    expect(await calls.chat(provider, '', simulate(3))).to.have.property('content');
  });

  for (const [modality, call] of Object.entries(calls)) {
    it(`${modality}: suffixes and directives apply`, async () => {
      const provider = simulated({ videoReadyMs: 0 });
      await call(provider, '', ctx());
      if (modality !== 'video') expect(await upstreamFailure(() => call(provider, '-fail-503', ctx()))).to.include({ kind: 'server_error' });
      expect(await upstreamFailure(() => call(provider, '-malformed', ctx()))).to.include({ kind: 'bad_response' });
      expect(await upstreamFailure(() => call(provider, '', ctx({ simulate: { failure: '429' } })))).to.include({ kind: 'rate_limited' });
      expect(await upstreamFailure(() => call(provider, '-timeout', ctx({ timeoutMs: 20 })))).to.include({ kind: 'timeout' });
    });
  }

  describe('streams', () => {
    it('throws failures before the first part from the first next()', async () => {
      const stream = simulated().chat!('sim-chat-fail-429').doStream(hello, ctx());
      const iterator = stream[Symbol.asyncIterator]();
      const err = await upstreamFailure(() => iterator.next());
      expect(err.kind).to.equal('rate_limited');
    });

    it('a malformed stream starts fine, then ends with a bad_response', async () => {
      const parts: unknown[] = [];
      const err = await upstreamFailure(async () => {
        for await (const part of simulated().chat!('sim-chat-malformed').doStream(hello, ctx())) parts.push(part);
      });
      expect(err.kind).to.equal('bad_response');
      expect(parts.length).to.be.greaterThan(0);
      expect(parts.some((p) => (p as { type: string }).type === 'finish')).to.equal(false);
    });

    it('a timeout stream never yields', async () => {
      const err = await upstreamFailure(() => collect(simulated().chat!('sim-chat-timeout').doStream(hello, ctx({ timeoutMs: 30 }))));
      expect(err.kind).to.equal('timeout');
    });
  });
});
