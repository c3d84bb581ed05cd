/**
 * Claude Code itself, headless (`-p`), against the gateway: `ANTHROPIC_BASE_URL` is the gateway (behind a
 * recording pass-through that keeps every request body Claude Code sent), `ANTHROPIC_API_KEY` a gateway
 * key, its models the simulated ones. The prompt asks sim-chat for a Read tool call (`sim:call`); Claude
 * Code runs the tool and sends its result back, and the model answers from it. The workspace is charged
 * exactly what its usage records say.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { expectChargedAsRecorded } from '../../support/anthropic';

const CLAUDE_CODE = path.join(__dirname, '..', '..', '..', '..', 'node_modules', '@anthropic-ai', 'claude-code', 'cli-wrapper.cjs');

interface Recorded { method: string; path: string; headers: http.IncomingHttpHeaders; body: any }

/** Forwards every request to the gateway unchanged (streams included), keeping a copy of each. */
async function recordingPassThrough(target: string): Promise<{ url: string; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try { body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined; } catch { body = raw.toString('utf8'); }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      forward.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function run(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLAUDE_CODE, ...args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

describe('Claude Code against the gateway', function () {
  this.timeout(240_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  let recorder: Awaited<ReturnType<typeof recordingPassThrough>>;
  let dir: string;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant({ credits: 100 });
    recorder = await recordingPassThrough(gateway.url);
    dir = await mkdtemp(path.join(os.tmpdir(), 'claude-code-'));
  });
  after(async () => {
    await recorder?.close();
    await gateway?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs headless through a Read tool round trip on a simulated model, charged as recorded', async () => {
    const home = path.join(dir, 'home');
    const work = path.join(dir, 'work');
    await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(home), fs.mkdir(work)]));
    const note = path.join(work, 'note.txt');
    await writeFile(note, 'The gateway note says: blue lanterns.\n');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH, HOME: home, TMPDIR: dir, TERM: 'dumb',
      ANTHROPIC_BASE_URL: recorder.url, ANTHROPIC_API_KEY: tenant.key,
      ANTHROPIC_MODEL: 'sim-chat', ANTHROPIC_SMALL_FAST_MODEL: 'sim-chat-mini', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'sim-chat-mini',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1',
    };
    const prompt = `sim:call Read {"file_path":"${note}"}`;
    const result = await run(['-p', prompt, '--output-format', 'json', '--allowedTools', 'Read', '--model', 'sim-chat', '--max-turns', '4'], { cwd: work, env, timeoutMs: 150_000 });
    const messageCalls = recorder.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/messages') && !r.path.includes('count_tokens'));
    const context = `exit ${result.code}\nstdout: ${result.stdout.slice(0, 2000)}\nstderr: ${result.stderr.slice(0, 2000)}\nrequests: ${recorder.requests.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.body)?.slice(0, 300)}`).join('\n')}`;
    expect(result.code, context).to.equal(0);
    const output = JSON.parse(result.stdout) as { is_error: boolean; result: string; num_turns: number };
    expect(output.is_error, context).to.equal(false);
    expect(output.result, context).to.contain('Based on Read, which returned');
    expect(output.result, context).to.contain('blue lanterns');

    // The model asked for Read; Claude Code ran it and sent the tool_result back in the next request.
    const conversation = messageCalls.filter((r) => JSON.stringify(r.body.messages).includes('sim:call Read'));
    expect(conversation.length, context).to.be.at.least(2);
    const withResult = conversation.find((r) => r.body.messages.some((m: any) => Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_result')));
    expect(withResult, context).to.not.equal(undefined);
    const resultBlock = withResult!.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_result');
    expect(JSON.stringify(resultBlock.content)).to.contain('blue lanterns');
    for (const call of messageCalls) {
      expect(call.headers['x-api-key']).to.equal(tenant.key);
      expect(call.body.stream, 'Claude Code streams its answers').to.equal(true);
    }

    const records = await gateway.runtime.db('usage_records').where({ workspace_id: tenant.workspaceId, endpoint: 'messages' });
    expect(records.length).to.equal(messageCalls.length);
    expect(records.every((r) => r.status === 'succeeded'), JSON.stringify(records)).to.equal(true);
    await expectChargedAsRecorded(gateway.runtime.db, tenant.workspaceId, 100);
  });
});
