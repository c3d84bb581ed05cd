/**
 * The benchmark's upstream: a minimal OpenAI-compatible server on loopback answering chat completions at
 * once (a fixed completion, or an SSE stream of small chunks when the JSON body asks for `stream: true`,
 * however the client spaces its JSON). Run as its own process so it does not share an event loop with what
 * is measured. It also swallows OTLP/HTTP trace exports (`POST /v1/traces`) for the tracing variant.
 */
import http from 'node:http';

const completion = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1_700_000_000, model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog.' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
});

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}
const words = 'The quick brown fox jumps over the lazy dog .'.split(' ');
const streamBody = [
  chunk({ role: 'assistant', content: '' }),
  ...words.map((w) => chunk({ content: `${w} ` })),
  chunk({}, 'stop'),
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-model', choices: [], usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 } })}\n\n`,
  'data: [DONE]\n\n',
];

function wantsStream(body: Buffer): boolean {
  try {
    return (JSON.parse(body.toString('utf8')) as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/v1/traces') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    if (wantsStream(Buffer.concat(chunks))) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const piece of streamBody) res.write(piece);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
    res.end(completion);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address() as import('node:net').AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
