import { expect } from 'chai';
import { FakeUpstream } from '../support/fake-upstream';
import { startTestGateway, type TestGateway, type Tenant } from '../support/gateway';

interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string }

describe('OpenTelemetry tracing (OTEL_EXPORTER_OTLP_ENDPOINT)', function () {
  this.timeout(120_000);
  // One fake serves both the provider (OpenAI's wire format) and the OTLP/HTTP collector.
  let fake: FakeUpstream;
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    fake = new FakeUpstream();
    await fake.start();
    fake.on('POST /v1/traces', { json: {} });
    fake.on('POST /v1/chat/completions', {
      json: {
        id: 'chatcmpl-t', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'traced' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      },
    });
    gateway = await startTestGateway({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: fake.url, OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-upstream' } });
    tenant = await gateway.newTenant({ credits: 10 });
  });
  after(async () => {
    await gateway?.stop();
    await fake?.stop();
  });

  const exportedSpans = (): OtlpSpan[] => fake.received('POST /v1/traces').flatMap((r) =>
    (r.json?.resourceSpans ?? []).flatMap((rs: any) => (rs.scopeSpans ?? []).flatMap((ss: any) => ss.spans ?? [])));

  it('exports one trace from the API request through the workflow, its activities and the first hop to the upstream call', async () => {
    const { response } = await tenant.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.status).to.equal(200);
    // The upstream call carried the trace on.
    const traceparent = String(fake.received('POST /v1/chat/completions').at(-1)!.headers.traceparent ?? '');
    const traceId = /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(traceparent)?.[1];
    expect(traceId, `traceparent: ${traceparent}`).to.be.a('string');

    const wanted = ['POST /v1/chat/completions', 'StartWorkflow:modelRequestWorkflow', 'RunWorkflow:modelRequestWorkflow', 'RunActivity:serveHop', 'FirstHop:serveHop'];
    let names: string[] = [];
    for (let i = 0; i < 100 && !wanted.every((n) => names.includes(n)); i++) {
      await new Promise((r) => setTimeout(r, 200));
      names = exportedSpans().filter((s) => s.traceId === traceId).map((s) => s.name);
    }
    expect(names).to.include.members(wanted);
    // The hop began in the API request beside the workflow's start (activities/first-hop.ts): the HTTP client
    // span of the upstream call is a child of its span, itself a child of the request's.
    const spans = exportedSpans().filter((s) => s.traceId === traceId);
    const request = spans.find((s) => s.name === 'POST /v1/chat/completions')!;
    const hop = spans.find((s) => s.name === 'FirstHop:serveHop')!;
    expect(hop.parentSpanId).to.equal(request.spanId);
    expect(spans.some((s) => s.parentSpanId === hop.spanId && /^POST/.test(s.name))).to.equal(true);
  });

  it('traces a stream\'s first hop, begun beside its workflow\'s start, as a span of the request', async () => {
    fake.on('POST /v1/chat/completions', {
      sse: [
        { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: 'streamed' }, finish_reason: null }] },
        { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
      ],
      endWith: '[DONE]',
    });
    const stream = await tenant.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    for await (const _chunk of stream) { /* read to the end */ }
    const traceId = /^00-([0-9a-f]{32})-/.exec(String(fake.received('POST /v1/chat/completions').at(-1)!.headers.traceparent ?? ''))?.[1];
    expect(traceId).to.be.a('string');
    let spans: OtlpSpan[] = [];
    for (let i = 0; i < 100 && !spans.some((s) => s.name === 'FirstHop:streamChat'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      spans = exportedSpans().filter((s) => s.traceId === traceId);
    }
    const request = spans.find((s) => s.name === 'POST /v1/chat/completions');
    const hop = spans.find((s) => s.name === 'FirstHop:streamChat');
    expect(hop?.parentSpanId).to.equal(request?.spanId);
  });
});
