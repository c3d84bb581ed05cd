import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { loadConfig } from '../../../config/env';
import { repoRoot } from '../../../core/paths';
import { ensureGoTool, TEMPORAL_CLI } from '../../../stack/go-tools';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';
import { getSharedStack } from '../../support/stack';

interface JsonPayload { metadata: Record<string, string>; data?: string }

const UI_ORIGIN = 'http://127.0.0.1:8233';

/** Every payload of a history, in the codec protocol's JSON form (base64 bytes). */
function payloadsOf(history: temporal.api.history.v1.IHistory): JsonPayload[] {
  return payloadsIn(temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.fromObject(history), { bytes: String, longs: String }));
}

/** Every payload in protobuf JSON (a history converted as above, or as the Temporal CLI prints it). */
function payloadsIn(json: unknown): JsonPayload[] {
  const found: JsonPayload[] = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const candidate = node as { metadata?: Record<string, string> };
    if (candidate.metadata && typeof candidate.metadata === 'object' && 'encoding' in candidate.metadata) {
      found.push(node as JsonPayload);
      return;
    }
    for (const value of Object.values(node)) walk(value);
  };
  walk(json);
  return found;
}

/** A text as it appears inside JSON (the model output holds quotes). */
const inJson = (text: string) => JSON.stringify(text).slice(1, -1);

const decodedText = (payloads: JsonPayload[]) => payloads.map((p) => Buffer.from(p.data ?? '', 'base64').toString('utf8')).join('\n');

describe('encrypted workflow histories and the operators\' codec endpoint', function () {
  this.timeout(120_000);
  const operatorToken = randomBytes(32).toString('base64url');
  let gateway: TestGateway;
  let tenant: Tenant;
  let plain: Client;

  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { OPERATOR_TOKEN: operatorToken } });
    tenant = await gateway.newTenant({ credits: 50 });
    // What anyone with access to the Temporal server sees: no codec.
    plain = new Client({ connection: gateway.runtime.temporal.connection, namespace: gateway.runtime.temporal.namespace });
  });
  after(() => gateway?.stop());

  async function chat(model: string, content: string): Promise<{ workflowId: string; output: string | null }> {
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
    });
    const body = (await res.json()) as any;
    const workflowId = `req-${res.headers.get('x-request-id')}`;
    // The API may answer from the worker before the run's completion reached the server.
    await gateway.runtime.temporal.client.workflow.getHandle(workflowId).result().catch(() => undefined);
    return { workflowId, output: body.choices?.[0]?.message?.content ?? null };
  }

  const decode = (payloads: unknown, headers: Record<string, string> = {}) => fetch(`${gateway.url}/codec/decode`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ payloads }),
  });
  const asOperator = { authorization: `Bearer ${operatorToken}` };

  describe('a chat request\'s history read straight from the Temporal server', () => {
    const prompt = `the secret prompt ${randomBytes(6).toString('hex')}`;
    let run: { workflowId: string; output: string | null };
    let history: temporal.api.history.v1.IHistory;

    before(async () => {
      run = await chat('sim-chat', prompt);
      history = await plain.workflow.getHandle(run.workflowId).fetchHistory();
    });

    it('holds neither the prompt nor the model output, only ciphertext', () => {
      expect(run.output).to.be.a('string').and.contain(prompt);
      const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
      const asText = JSON.stringify(history.events, function (key, value) {
        const raw = (this as Record<string, unknown>)[key];
        return raw instanceof Uint8Array ? Buffer.from(raw).toString('latin1') : value;
      });
      for (const secret of [prompt, run.output!, inJson(run.output!)]) {
        expect(bytes.includes(Buffer.from(secret)), 'raw history bytes').to.equal(false);
        expect(asText.includes(secret), 'history events as JSON').to.equal(false);
      }
      const encodings = payloadsOf(history).map((p) => Buffer.from(p.metadata.encoding, 'base64').toString());
      expect(encodings).to.include('binary/encrypted');
      expect(encodings.filter((e) => e !== 'binary/encrypted'), 'payloads left in the clear').to.satisfy((rest: string[]) => rest.every((e) => e === 'json/plain'));
    });

    it('decodes with the codec: the gateway\'s own client, and the codec endpoint with the operator token', async () => {
      const started = history.events!.find((e) => e.workflowExecutionStartedEventAttributes)!.workflowExecutionStartedEventAttributes!;
      const input = await decodeArrayFromPayloads(gateway.runtime.temporal.client.options.loadedDataConverter, started.input?.payloads);
      expect(JSON.stringify(input)).to.contain(prompt);

      const res = await decode(payloadsOf(history), asOperator);
      expect(res.status).to.equal(200);
      const { payloads } = (await res.json()) as { payloads: JsonPayload[] };
      const text = decodedText(payloads);
      expect(text).to.contain(prompt);
      expect(text).to.contain(inJson(run.output!));
      expect(payloads.map((p) => Buffer.from(p.metadata.encoding, 'base64').toString())).not.to.include('binary/encrypted');
    });

    it('opens in the Temporal CLI through the codec endpoint, and only through it', async () => {
      const stack = await getSharedStack();
      const cli = ensureGoTool(TEMPORAL_CLI, loadConfig().cacheDir, () => undefined);
      const shownPayloads = async (...extra: string[]) => decodedText(payloadsIn(JSON.parse((await promisify(execFile)(cli, [
        'workflow', 'show', '--address', stack.temporalAddress, '--namespace', gateway.runtime.temporal.namespace,
        '--workflow-id', run.workflowId, '--output', 'json', ...extra,
      ])).stdout)));
      expect(await shownPayloads()).not.to.contain(prompt);
      expect(await shownPayloads('--codec-endpoint', `${gateway.url}/codec`, '--codec-auth', `Bearer ${operatorToken}`)).to.contain(prompt);
    });
  });

  it('keeps failure messages encrypted and writes no stack traces or install paths', async () => {
    const { workflowId } = await chat('sim-chat-fail-500', 'fail please');
    const history = await plain.workflow.getHandle(workflowId).fetchHistory();
    const raw = Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1');
    expect(raw).to.contain('Encoded failure');
    expect(raw).not.to.contain(repoRoot);

    const res = await decode(payloadsOf(history), asOperator);
    const failures = ((await res.json()) as { payloads: JsonPayload[] }).payloads
      .map((p) => JSON.parse(Buffer.from(p.data ?? '', 'base64').toString('utf8') || 'null'))
      .filter((v) => v && typeof v === 'object' && 'stack_trace' in v);
    expect(failures.length).to.be.greaterThan(0);
    expect(failures.map((f) => f.message).join('\n')).to.contain('500');
    for (const f of failures) {
      expect(raw, 'a failure message in the clear').not.to.contain(f.message);
      expect(f.stack_trace).to.equal('');
    }
  });

  describe('POST /codec/decode and /codec/encode', () => {
    const sample = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"hello operators"').toString('base64') };

    it('refuses callers without the operator token, API keys included', async () => {
      const attempts: Array<Record<string, string>> = [{}, { authorization: `Bearer ${tenant.key}` }, { authorization: `Bearer ${operatorToken}x` }, { authorization: operatorToken }];
      for (const headers of attempts) {
        const res = await decode([sample], headers);
        expect(res.status).to.equal(401);
        expect(((await res.json()) as any).error).to.include({ code: 'operator_token_required', type: 'authentication_error' });
      }
    });

    it('encodes and decodes for the operator, following the protocol\'s shape', async () => {
      const encoded = await fetch(`${gateway.url}/codec/encode`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': gateway.runtime.temporal.namespace, ...asOperator },
        body: JSON.stringify({ payloads: [sample] }),
      });
      expect(encoded.status).to.equal(200);
      const sealed = ((await encoded.json()) as { payloads: JsonPayload[] }).payloads;
      expect(Buffer.from(sealed[0].metadata.encoding, 'base64').toString()).to.equal('binary/encrypted');
      expect(sealed[0].metadata).to.have.property('encryption-key-id');
      const res = await decode(sealed, { ...asOperator, 'x-namespace': gateway.runtime.temporal.namespace });
      expect(await res.json()).to.deep.equal({ payloads: [sample] });
    });

    it('answers 400 for another namespace, a malformed body or a payload it cannot open; 405 for GET', async () => {
      expect((await decode([sample], { ...asOperator, 'x-namespace': 'someone-else' })).status).to.equal(400);
      for (const payloads of [null, ['x'], [{ metadata: { encoding: 'not base64!' } }]]) {
        const res = await decode(payloads, asOperator);
        expect(res.status, JSON.stringify(payloads)).to.equal(400);
        expect(((await res.json()) as any).error.code).to.equal('invalid_payloads');
      }
      const foreign = { metadata: { encoding: Buffer.from('binary/encrypted').toString('base64'), 'encryption-key-id': Buffer.from('nope').toString('base64') }, data: randomBytes(40).toString('base64') };
      const res = await decode([sample, foreign], asOperator);
      expect(res.status).to.equal(400);
      expect(((await res.json()) as any).error).to.include({ code: 'undecodable_payload', param: 'payloads[1]' });
      expect((await fetch(`${gateway.url}/codec/decode`, { headers: asOperator })).status).to.equal(405);
    });
  });

  describe('from the Temporal Web UI (a browser)', () => {
    it('allows the UI origin\'s preflight with the headers the UI sends, and refuses other origins', async () => {
      for (const origin of [UI_ORIGIN, 'http://localhost:8233']) {
        const res = await fetch(`${gateway.url}/codec/decode`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace,authorization' },
        });
        expect(res.status, origin).to.equal(204);
        expect(res.headers.get('access-control-allow-origin')).to.equal(origin);
        expect(res.headers.get('access-control-allow-credentials')).to.equal('true');
        expect(res.headers.get('access-control-allow-methods')).to.contain('POST');
        expect(res.headers.get('access-control-allow-headers')!.split(/,\s*/)).to.include.members(['content-type', 'x-namespace', 'authorization']);
      }
      const foreign = await fetch(`${gateway.url}/codec/decode`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(foreign.status).to.equal(403);
      expect(foreign.headers.get('access-control-allow-origin')).to.equal(null);
      const posted = await decode([], { ...asOperator, origin: 'https://evil.example' });
      expect(posted.status).to.equal(403);
    });

    it('lets the UI read its answers, refusals included', async () => {
      const refused = await decode([], { origin: UI_ORIGIN });
      expect(refused.status).to.equal(401);
      expect(refused.headers.get('access-control-allow-origin')).to.equal(UI_ORIGIN);
      const allowed = await decode([], { origin: UI_ORIGIN, ...asOperator });
      expect(allowed.status).to.equal(200);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal(UI_ORIGIN);
    });

    it('signs an operator in with the token; the session cookie opens the codec from the UI origin', async () => {
      const signIn = (token: string) => fetch(`${gateway.url}/codec/session`, {
        method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString(),
      });
      const refused = await signIn(tenant.key);
      expect(refused.status).to.equal(401);
      expect(refused.headers.get('set-cookie')).to.equal(null);

      const res = await signIn(operatorToken);
      expect(res.status).to.equal(303);
      const cookie = res.headers.get('set-cookie')!;
      expect(cookie).to.match(/^gateway_codec_session=/);
      expect(cookie.toLowerCase()).to.contain('httponly').and.contain('samesite=strict').and.contain('path=/codec');
      const session = cookie.split(';')[0];
      expect(session).not.to.contain(operatorToken);

      const decoded = await decode([], { origin: UI_ORIGIN, cookie: session });
      expect(decoded.status).to.equal(200);
      const page = await (await fetch(`${gateway.url}/codec/session`, { headers: { cookie: session } })).text();
      expect(page).to.contain('Signed in until');

      const forged = session.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      expect((await decode([], { origin: UI_ORIGIN, cookie: forged })).status).to.equal(401);
      const expired = `gateway_codec_session=${Date.now() - 1000}.${session.split('.')[1]}`;
      expect((await decode([], { origin: UI_ORIGIN, cookie: expired })).status).to.equal(401);
    });
  });
});
