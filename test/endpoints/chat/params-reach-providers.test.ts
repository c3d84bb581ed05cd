/**
 * Nothing a chat model accepts is dropped on the way: for every catalog chat model served over HTTP and
 * every parameter its record allows, a request carrying that one parameter is run through the chat
 * handler against fake upstreams speaking each family's wire format, and the parameter must show in
 * what the upstream received. A parameter with no mapping below fails the test (it would be dropped).
 * The simulated models have no wire; test/simulator/chat.test.ts covers them.
 */
import { expect } from 'chai';
import crypto from 'node:crypto';
import { loadCatalogFiles } from '../../../catalog/load';
import type { ModelRecord, ParamRule } from '../../../catalog/types';
import { chatHandler } from '../../../endpoints/chat/handler';
import type { ChatCompletionBody } from '../../../endpoints/chat/body';
import type { CallEnv } from '../../../endpoints/types';
import { providersFromEnv } from '../../../main/providers';
import { PROVIDER_HOSTS } from '../../../providers/registry';
import { JSON_TOOL_NAME } from '../../../providers/anthropic/json-mode';
import { FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import openaiCompletion from '../../providers/openai-compatible/fixtures/chat-completion.json';
import anthropicMessage from '../../providers/anthropic/fixtures/message-text.json';
import geminiAnswer from '../../providers/google/fixtures/generate-text.json';
import converseAnswer from '../../providers/bedrock/fixtures/converse-text.json';

const TOOL = { type: 'function' as const, function: { name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } } };

/** A valid value of each parameter for this model, and what else the request needs for it to apply. */
function requestFor(record: ModelRecord, name: string): Partial<ChatCompletionBody> {
  const rule = record.allowedParams[name];
  switch (name) {
    case 'temperature': return { temperature: 0.5 };
    case 'top_p': return { top_p: 0.5 };
    case 'stop': return { stop: ['END'] };
    case 'seed': return { seed: 42 };
    case 'presence_penalty': return { presence_penalty: 0.5 };
    case 'frequency_penalty': return { frequency_penalty: 0.25 };
    case 'max_tokens': return { max_tokens: 77 };
    case 'max_completion_tokens': return { max_completion_tokens: 66 };
    case 'tools': return { tools: [TOOL] };
    // `required` where the model has it (some of Bedrock's only choose for themselves).
    case 'tool_choice': return { tools: [TOOL], tool_choice: values(rule).includes('required') ? 'required' : 'auto' };
    case 'parallel_tool_calls': return { tools: [TOOL], parallel_tool_calls: false };
    // JSON mode where the model has it (`text`, the default, otherwise).
    case 'response_format': return { response_format: { type: lastValue(rule) === 'text' ? 'text' : 'json_object' } };
    case 'logprobs': return { logprobs: true };
    case 'top_logprobs': return { logprobs: true, top_logprobs: 3 };
    case 'logit_bias': return { logit_bias: { '50256': -100 } };
    case 'reasoning_effort': return { reasoning_effort: lastValue(rule) };
    case 'verbosity': return { verbosity: lastValue(rule) };
    case 'user': return { user: 'user-123' };
    case 'n': return { n: 2 };
    default: return {};
  }
}

function values(rule: ParamRule): unknown[] {
  return Array.isArray(rule) ? rule : rule.values ?? [];
}

function lastValue(rule: ParamRule): string {
  const all = values(rule);
  return String(all[all.length - 1]);
}

type Check = (sent: RecordedRequest[], request: Partial<ChatCompletionBody>, record: ModelRecord) => void;

const one = (sent: RecordedRequest[]) => {
  expect(sent).to.have.length(1);
  return sent[0].json;
};
/** One call per choice: the gateway fans out where the host answers one choice per call. */
const fannedOut: Check = (sent) => expect(sent).to.have.length(2);
const field = (wire: string, from: keyof ChatCompletionBody): Check => (sent, request) => expect(one(sent)[wire], wire).to.deep.equal(request[from]);

/** OpenAI's chat completions format: OpenAI-compatible hosts, and Cohere's compatibility endpoint. */
const OPENAI_WIRE: Record<string, Check> = {
  temperature: field('temperature', 'temperature'),
  top_p: field('top_p', 'top_p'),
  stop: field('stop', 'stop'),
  seed: field('seed', 'seed'),
  presence_penalty: field('presence_penalty', 'presence_penalty'),
  frequency_penalty: field('frequency_penalty', 'frequency_penalty'),
  // Reasoning models take the limit as max_completion_tokens, the others as max_tokens.
  max_tokens: (sent) => expect(one(sent).max_tokens ?? one(sent).max_completion_tokens).to.equal(77),
  max_completion_tokens: (sent) => expect(one(sent).max_tokens ?? one(sent).max_completion_tokens).to.equal(66),
  tools: (sent) => expect(one(sent).tools).to.deep.equal([TOOL]),
  tool_choice: field('tool_choice', 'tool_choice'),
  parallel_tool_calls: field('parallel_tool_calls', 'parallel_tool_calls'),
  response_format: field('response_format', 'response_format'),
  logprobs: field('logprobs', 'logprobs'),
  top_logprobs: field('top_logprobs', 'top_logprobs'),
  logit_bias: field('logit_bias', 'logit_bias'),
  reasoning_effort: field('reasoning_effort', 'reasoning_effort'),
  verbosity: field('verbosity', 'verbosity'),
  user: field('user', 'user'),
  n: (sent, _request, record) => {
    if (NATIVE_CHOICES.has(record.provider)) expect(one(sent).n).to.equal(2);
    else fannedOut(sent, _request, record);
  },
};

/** Hosts whose upstream answers several choices in one call (see providers/registry.ts). */
const NATIVE_CHOICES = new Set([...PROVIDER_HOSTS.filter((h) => h.extra?.nativeChoices === true).map((h) => h.id), 'azure']);

const ANTHROPIC_WIRE: Record<string, Check> = {
  temperature: field('temperature', 'temperature'),
  top_p: field('top_p', 'top_p'),
  stop: field('stop_sequences', 'stop'),
  max_tokens: (sent) => expect(one(sent).max_tokens).to.equal(77),
  max_completion_tokens: (sent) => expect(one(sent).max_tokens).to.equal(66),
  tools: (sent) => expect(one(sent).tools.map((t: { name: string }) => t.name)).to.deep.equal(['lookup']),
  tool_choice: (sent) => expect(one(sent).tool_choice).to.deep.equal({ type: 'any' }),
  parallel_tool_calls: (sent) => expect(one(sent).tool_choice).to.deep.equal({ type: 'auto', disable_parallel_tool_use: true }),
  // JSON mode is a forced answer tool; plain text is what the API answers anyway.
  response_format: (sent, request) => expect(one(sent).tool_choice).to.deep.equal(
    (request.response_format as { type: string }).type === 'text' ? undefined : { type: 'tool', name: JSON_TOOL_NAME },
  ),
  user: (sent) => expect(one(sent).metadata).to.deep.equal({ user_id: 'user-123' }),
  n: fannedOut,
};

const config = (sent: RecordedRequest[]) => one(sent).generationConfig ?? {};
const GOOGLE_WIRE: Record<string, Check> = {
  temperature: (sent) => expect(config(sent).temperature).to.equal(0.5),
  top_p: (sent) => expect(config(sent).topP).to.equal(0.5),
  stop: (sent) => expect(config(sent).stopSequences).to.deep.equal(['END']),
  seed: (sent) => expect(config(sent).seed).to.equal(42),
  presence_penalty: (sent) => expect(config(sent).presencePenalty).to.equal(0.5),
  frequency_penalty: (sent) => expect(config(sent).frequencyPenalty).to.equal(0.25),
  max_tokens: (sent) => expect(config(sent).maxOutputTokens).to.equal(77),
  max_completion_tokens: (sent) => expect(config(sent).maxOutputTokens).to.equal(66),
  tools: (sent) => expect(one(sent).tools[0].functionDeclarations[0].name).to.equal('lookup'),
  tool_choice: (sent) => expect(one(sent).toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'ANY' } }),
  response_format: (sent) => expect(config(sent).responseMimeType).to.equal('application/json'),
  reasoning_effort: (sent, request, record) => expect(config(sent).thinkingConfig).to.deep.equal(
    record.upstreamId.startsWith('gemini-3') ? { thinkingLevel: request.reasoning_effort } : { thinkingBudget: { none: 0, low: 1024, medium: 8192, high: 24576 }[request.reasoning_effort as string] },
  ),
  // Accepted and not sent: Gemini has no end-user field, and OpenAI uses `user` for abuse monitoring only
  // (catalog/README.md lists this). The request still succeeds.
  user: (sent) => expect(JSON.stringify(one(sent))).not.to.contain('user-123'),
  n: fannedOut,
};

const inference = (sent: RecordedRequest[]) => one(sent).inferenceConfig ?? {};
/** Bedrock's Converse API (signed; the model id is in the path). */
const BEDROCK_WIRE: Record<string, Check> = {
  temperature: (sent) => expect(inference(sent).temperature).to.equal(0.5),
  top_p: (sent) => expect(inference(sent).topP).to.equal(0.5),
  stop: (sent) => expect(inference(sent).stopSequences).to.deep.equal(['END']),
  max_tokens: (sent) => expect(inference(sent).maxTokens).to.equal(77),
  max_completion_tokens: (sent) => expect(inference(sent).maxTokens).to.equal(66),
  tools: (sent) => expect(one(sent).toolConfig.tools[0].toolSpec.name).to.equal('lookup'),
  tool_choice: (sent, request) => expect(one(sent).toolConfig.toolChoice).to.deep.equal(request.tool_choice === 'required' ? { any: {} } : { auto: {} }),
  // Text is all Converse answers; there is nothing to send.
  response_format: (sent) => expect(Object.keys(one(sent)).sort()).to.deep.equal(['messages']),
  n: fannedOut,
};

const WIRES: Record<string, Record<string, Check>> = {
  'openai-compatible': OPENAI_WIRE, 'azure-openai': OPENAI_WIRE, cohere: OPENAI_WIRE, anthropic: ANTHROPIC_WIRE, google: GOOGLE_WIRE,
  bedrock: BEDROCK_WIRE,
};

describe('every chat parameter a model allows reaches its provider', function () {
  this.timeout(120_000);
  const fake = new FakeUpstream();
  const chatModels = loadCatalogFiles().filter((r) => r.modality === 'chat' && r.provider !== 'simulated');
  let env: CallEnv;

  before(async () => {
    await fake.start();
    // One fake host for every provider, each under its own path prefix; answers in the family's format.
    fake.on('POST /*', (req) => {
      if (req.path.endsWith('/chat/completions')) return { json: openaiCompletion };
      if (req.path.endsWith('/v1/messages')) return { json: anthropicMessage };
      if (req.path.endsWith(':generateContent')) return { json: geminiAnswer };
      if (req.path.endsWith('/converse')) return { json: converseAnswer };
      if (req.path.endsWith(':rawPredict')) return { json: anthropicMessage };
      // Vertex's service account exchanges its signed JWT here (test/providers/vertex verifies that exchange).
      if (req.path === '/vertex-token') return { json: { access_token: 'ya29.params', expires_in: 3600, token_type: 'Bearer' } };
      return { status: 404, json: { error: { message: `unexpected ${req.path}` } } };
    });
    const hostEnv: NodeJS.ProcessEnv = {};
    for (const host of PROVIDER_HOSTS) {
      hostEnv[`${host.envPrefix}_BASE_URL`] = `${fake.url}/${host.id}${host.family === 'openai-compatible' ? '/v1' : ''}`;
      hostEnv[`${host.envPrefix}_API_KEY`] = 'test-key';
    }
    hostEnv.AZURE_OPENAI_ENDPOINT = `${fake.url}/azure`;
    // Bedrock signs with AWS keys in a region (this fake does not check signatures; test/providers/bedrock does).
    Object.assign(hostEnv, { BEDROCK_REGION: 'us-east-1', BEDROCK_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', BEDROCK_SECRET_ACCESS_KEY: 'test-secret-0123456789' });
    const privateKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    hostEnv.VERTEX_CREDENTIALS_JSON = JSON.stringify({
      type: 'service_account', project_id: 'params-project', private_key: privateKey, client_email: 'sa@params-project.iam.gserviceaccount.com', token_uri: `${fake.url}/vertex-token`,
    });
    // Chat without files uses no storage, database or catalog.
    env = { requestId: 'req_params', created: 1_700_000_000, attempt: 1, providers: providersFromEnv(hostEnv), storage: null as never, catalog: null as never };
  });
  after(() => fake.stop());

  it('covers chat models of every family that serves chat over HTTP', () => {
    const families = new Set(chatModels.map((r) => familyOf(r)));
    expect([...families].sort()).to.deep.equal(['anthropic', 'azure-openai', 'bedrock', 'cohere', 'google', 'openai-compatible', 'vertex']);
  });

  for (const record of loadCatalogFiles().filter((r) => r.modality === 'chat' && r.provider !== 'simulated')) {
    it(`${record.slug} (${record.provider}): ${Object.keys(record.allowedParams).join(', ')}`, async () => {
      const wire = wireOf(record);
      for (const name of Object.keys(record.allowedParams)) {
        const check = wire[name];
        expect(check, `${record.slug}: no wire mapping for '${name}', so it would be dropped`).to.be.a('function');
        const request = requestFor(record, name);
        const body: ChatCompletionBody = { model: record.slug, messages: [{ role: 'user', content: 'Define "gateway".' }], ...request };
        fake.requests.length = 0;
        chatHandler.check(record, body);
        await chatHandler.call(record, body, env);
        const sent = fake.requests.filter((r) => r.path.startsWith(`/${record.provider}/`));
        try {
          check(sent, request, record);
        } catch (err) {
          (err as Error).message = `${record.slug} '${name}': ${(err as Error).message}`;
          throw err;
        }
      }
    });
  }
});

/** Vertex serves Claude in the Messages format and Gemini in the generateContent format. */
function wireOf(record: ModelRecord): Record<string, Check> {
  if (familyOf(record) === 'vertex') return record.upstreamId.startsWith('claude-') ? ANTHROPIC_WIRE : GOOGLE_WIRE;
  return WIRES[familyOf(record)];
}

function familyOf(record: ModelRecord): string {
  return PROVIDER_HOSTS.find((h) => h.id === record.provider)!.family;
}
