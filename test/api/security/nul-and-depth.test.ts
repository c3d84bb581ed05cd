import { expect } from 'chai';
import { MAX_JSON_DEPTH } from '../../../core/input-limits';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { callRoute, hasPathId, ROUTES, type RouteCase } from '../../support/routes';

/** JSON text `{"x": [[[...]]]}` nesting `depth` levels in all (the outer object counts). */
function nested(depth: number): string {
  return `{"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
}

describe('security: control characters, NUL and nesting depth on every route', function () {
  this.timeout(300_000);
  let gateway: TestGateway;
  let owner: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    // The owner may call every route, so what answers is the input check, not the role guard.
    owner = await gateway.newTenant({ role: 'owner', credits: 100 });
  });
  after(() => gateway?.stop());

  /** Anthropic's error shape (the Messages API) has no code: its message says which refusal it is. */
  const ANTHROPIC_MESSAGES: Record<string, RegExp> = { invalid_characters: /NUL|control characters/, json_too_deep: /nested too deeply/ };

  async function expect400(res: Response, code: string, label: string, route?: RouteCase): Promise<void> {
    const body = (await res.json()) as { type?: string; error: { type: string; code: string; message: string } };
    expect(res.status, `${label}: ${JSON.stringify(body)}`).to.equal(400);
    expect(body.error.type, label).to.equal('invalid_request_error');
    if (route?.anthropicErrors) {
      expect(body.type, label).to.equal('error');
      expect(body.error.message, label).to.match(ANTHROPIC_MESSAGES[code]);
    } else {
      expect(body.error.code, label).to.equal(code);
    }
  }

  async function expectNothingCharged(): Promise<void> {
    const kinds = await gateway.runtime.db('credit_ledger').where({ workspace_id: owner.workspaceId }).whereNot({ kind: 'topup' }).pluck('kind');
    expect(kinds).to.deep.equal([]);
  }

  const withId = ROUTES.filter(hasPathId);
  const withCursor = ROUTES.filter((r) => r.cursors);
  const withJson = ROUTES.filter((r) => r.body);

  it('has routes of each kind to try', () => {
    expect(withId.length).to.be.greaterThan(8);
    expect(withCursor.length).to.be.greaterThan(2);
    expect(withJson.length).to.be.at.least(12);
  });

  it('refuses NUL and control characters in path ids with a 400', async () => {
    for (const route of withId) {
      for (const id of ['\u0000', 'file_\u0000x', 'a\u0001b', 'x\u007f', 'x\u009b']) {
        await expect400(await callRoute(owner, route, { id }), 'invalid_characters', `${route.method} ${route.route} ${JSON.stringify(id)}`, route);
      }
    }
    await expectNothingCharged();
  });

  it('refuses NUL and control characters in cursors with a 400', async () => {
    for (const route of withCursor) {
      for (const cursor of route.cursors!) {
        for (const value of ['\u0000', 'file_abc\u0000', '\u001b[2J']) {
          await expect400(await callRoute(owner, route, { query: { [cursor]: value } }), 'invalid_characters', `${route.route}?${cursor}=${JSON.stringify(value)}`, route);
        }
      }
    }
  });

  it('refuses NUL anywhere in a body with a 400 before anything reads it', async () => {
    for (const route of withJson) {
      const made = await route.body!();
      if ('json' in made) {
        const raw = JSON.stringify({ ...made.json, note: 'a\u0000b' });
        await expect400(await callRoute(owner, route, { rawJson: raw }), 'invalid_characters', `${route.method} ${route.route}`, route);
      } else {
        const form = made.form.map((part) => ('value' in part ? { ...part, value: `${part.value}\u0000` } : part));
        const custom: RouteCase = { ...route, body: async () => ({ form }) };
        const res = await callRoute(owner, custom);
        expect(res.status, route.route).to.equal(400);
        expect(((await res.json()) as { error: { code: string } }).error.code, route.route).to.equal('invalid_characters');
      }
    }
    await expectNothingCharged();
  });

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels with a 400, and takes ${MAX_JSON_DEPTH}`, async () => {
    const jsonRoutes: RouteCase[] = [];
    for (const route of withJson) if ('json' in (await route.body!())) jsonRoutes.push(route);
    for (const route of jsonRoutes) {
      // ~48 KB of nesting, as in the report: refused before it is parsed, hashed or stored.
      await expect400(await callRoute(owner, route, { rawJson: nested(8000) }), 'json_too_deep', `${route.route} 8000`, route);
      await expect400(await callRoute(owner, route, { rawJson: nested(MAX_JSON_DEPTH + 1) }), 'json_too_deep', `${route.route} ${MAX_JSON_DEPTH + 1}`, route);
      const atLimit = await callRoute(owner, route, { rawJson: nested(MAX_JSON_DEPTH) });
      const body = (await atLimit.json()) as { error?: { code: string; message: string } };
      // At the limit the body is read; the route's own validation then answers (never a 500).
      expect(atLimit.status, route.route).to.be.below(500);
      expect(body.error?.code, route.route).not.to.equal('json_too_deep');
      expect(body.error?.message ?? '', route.route).not.to.match(ANTHROPIC_MESSAGES.json_too_deep);
    }
    // Brackets inside strings are text, not nesting.
    const chat = ROUTES.find((r) => r.route === '/v1/chat/completions')!;
    const res = await callRoute(await gateway.newTenant(), chat, { rawJson: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: '['.repeat(500) }] }) });
    expect(res.status).to.equal(200);
  });

  it('refuses control characters in alert e-mail addresses before anything is stored', async () => {
    const alerts = ROUTES.find((r) => r.route === '/v1/budget/alerts' && r.method === 'POST')!;
    const post = (to: string) => callRoute(owner, alerts, { rawJson: JSON.stringify({ threshold_type: 'credits', threshold: 5, channels: { email: { to: [to] } } }) });
    await expect400(await post('ops\u0000@example.com'), 'invalid_characters', 'NUL');
    for (const to of ['ops\u0001@example.com', 'ops@exa\u007fmple.com', 'ops@example.com\u0085']) {
      await expect400(await post(to), 'invalid_email', JSON.stringify(to));
    }
    expect(await gateway.runtime.db('budget_alerts').where({ workspace_id: owner.workspaceId })).to.deep.equal([]);
  });

  it('requires the object a tag names: json_schema without json_schema is a 400 and starts nothing', async () => {
    const chat = ROUTES.find((r) => r.route === '/v1/chat/completions')!;
    const cases: Array<[unknown, string]> = [
      [{ type: 'json_schema' }, 'response_format.json_schema'],
    ];
    for (const [responseFormat, param] of cases) {
      const res = await callRoute(owner, chat, { rawJson: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], response_format: responseFormat }) });
      const body = (await res.json()) as { error: { code: string; param: string } };
      expect(res.status).to.equal(400);
      expect(body.error).to.include({ code: 'missing_required_parameter', param });
    }
    for (const part of [{ type: 'image_url' }, { type: 'input_audio' }, { type: 'file' }, { type: 'file', file: {} }, { type: 'text' }]) {
      const res = await callRoute(owner, chat, { rawJson: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: [part] }] }) });
      expect(res.status, JSON.stringify(part)).to.equal(400);
    }
    await expectNothingCharged();
  });
});
