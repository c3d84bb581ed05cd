/**
 * Who spent, by name, and each request's credits read as one entry: the costs and usage reports name the keys
 * (`api_key_name`) and members (`user_name`, `user_email`) they are grouped by, and `GET /v1/billing/ledger`
 * shows a hold together with its release and charge, or with its refund, naming the API key or, for a
 * Playground request, the member who made it. The ledger's rows themselves stay as they were written.
 */
import { expect } from 'chai';
import type { TestGateway } from '../support/gateway';
import { invitedMember, signUp, type Session } from '../support/people';
import { newChat, playgroundGateway, settledChat } from '../support/playground';

describe('names in the usage reports and the ledger grouped by hold', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let stop: () => Promise<void>;
  let owner: Session;
  let dev: Session & { userId: string };
  let key: { id: string; value: string };
  const requests: Record<'ok' | 'failed' | 'playground', string> = { ok: '', failed: '', playground: '' };

  const chat = async (headers: Record<string, string> = {}) => {
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key.value}`, ...headers },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'Hello there' }] }),
    });
    await res.arrayBuffer();
    return res;
  };

  before(async function () {
    this.timeout(240_000);
    const started = await playgroundGateway();
    ({ gateway, stop } = started);
    const { smtp } = started;
    owner = await signUp(gateway.url, smtp, 'olga');
    dev = await invitedMember(gateway.url, smtp, owner, 'dora', 'developer');
    const made = (await dev.json('POST', '/v1/organization/api_keys', { name: 'dora-laptop', preset: 'custom' })).body;
    key = { id: made.id, value: made.value };

    const ok = await chat();
    expect(ok.status).to.equal(200);
    requests.ok = ok.headers.get('x-request-id')!;
    const failed = await chat({ 'x-simulate-failure': '400' });
    expect(failed.status).to.equal(400);
    requests.failed = failed.headers.get('x-request-id')!;
    const c = await newChat(dev, { model: 'sim-chat' });
    expect((await dev.json('POST', `/api/playground/chats/${c.id}/messages`, { content: 'Hello from the Playground' })).status).to.equal(202);
    requests.playground = (await settledChat(dev, c.id)).messages[1].request_id;
  });
  after(async () => { await stop?.(); });

  it('names the key and the member in the costs and usage reports', async () => {
    const results = async (path: string) => ((await owner.json('GET', path)).body.data as any[]).flatMap((b) => b.results);

    const byKey = await results('/v1/organization/costs?group_by=api_key_id');
    expect(byKey.find((r) => r.api_key_id === key.id)).to.deep.include({ api_key_name: 'dora-laptop' });
    // The Playground has no key: its charge is a result without one, and without a name.
    expect(byKey.find((r) => r.api_key_id === null)).to.deep.include({ api_key_name: null });

    const byMember = await results('/v1/organization/costs?group_by=user_id');
    expect(byMember.map((r) => ({ user_id: r.user_id, source: r.source, user_name: r.user_name, user_email: r.user_email })))
      .to.have.deep.members(['api', 'playground'].map((source) => ({ user_id: dev.userId, source, user_name: 'dora', user_email: dev.email })));
    for (const r of byMember) expect(r.amount.value).to.be.above(0);

    const usage = await results('/v1/organization/usage/completions?group_by=api_key_id,user_id');
    expect(usage.find((r) => r.api_key_id === key.id)).to.deep.include({ api_key_name: 'dora-laptop', user_name: 'dora', user_email: dev.email, source: 'api' });
    // Not grouped by them: no names either.
    expect((await results('/v1/organization/costs?group_by=model'))[0]).to.not.have.any.keys('api_key_name', 'user_name', 'user_email');
  });

  it('shows each hold with what ended it, the key by name and the Playground member, newest first', async () => {
    const ledger = await owner.json('GET', '/v1/billing/ledger');
    expect(ledger.status).to.equal(200);
    const entries = ledger.body.data as any[];
    const of = (requestId: string) => entries.filter((e) => e.request_id === requestId);

    // A request that answered: held, the hold released, the exact charge settled: one entry.
    const [ok] = of(requests.ok);
    expect(of(requests.ok)).to.have.length(1);
    expect(ok.movements.map((m: any) => m.kind)).to.deep.equal(['reserve', 'release', 'settle']);
    expect(ok).to.deep.include({ kind: 'settle', api_key_id: key.id, api_key: { id: key.id, name: 'dora-laptop' }, member: null, model: 'sim-chat' });
    expect(ok.hold.held).to.be.above(0);
    expect(ok.hold).to.deep.equal({ held: ok.hold.held, released: ok.hold.held, refunded: 0, charged: ok.hold.charged, open: false });
    expect(ok.hold.charged).to.be.above(0).and.at.most(ok.hold.held);
    expect(ok.credits).to.be.closeTo(-ok.hold.charged, 1e-9);

    // A request the provider refused: its hold and the refund that gave it back, nothing charged.
    const [failed] = of(requests.failed);
    expect(of(requests.failed)).to.have.length(1);
    expect(failed.movements.map((m: any) => m.kind)).to.deep.equal(['reserve', 'refund']);
    expect(failed).to.deep.include({ kind: 'refund', credits: 0, api_key: { id: key.id, name: 'dora-laptop' }, member: null });
    expect(failed.hold).to.deep.equal({ held: failed.hold.held, released: 0, refunded: failed.hold.held, charged: 0, open: false });

    // A Playground request has no key: it names the member who made it.
    const [playground] = of(requests.playground);
    expect(playground).to.deep.include({ kind: 'settle', api_key_id: null, api_key: null, member: { id: dev.userId, name: 'dora', email: dev.email } });
    expect(playground.movements.map((m: any) => m.kind)).to.deep.equal(['reserve', 'release', 'settle']);

    // Newest first; the plan's grant stays an entry of its own, the oldest.
    expect(entries.map((e) => e.request_id)).to.deep.equal([requests.playground, requests.failed, requests.ok, null]);
    expect(entries.at(-1)).to.deep.include({ kind: 'grant', hold: null, api_key: null, member: null });

    // Every ledger row of the workspace is in exactly one entry, and the entries add up to the balance.
    const workspaceId = (await owner.json('GET', '/api/me')).body.workspace.id;
    const rows = await gateway.runtime.db('credit_ledger').where({ workspace_id: workspaceId }).count({ n: '*' }).first();
    const movements = entries.flatMap((e) => e.movements.map((m: any) => m.id));
    expect(new Set(movements).size).to.equal(movements.length);
    expect(movements.length).to.equal(Number(rows?.n));
    const balance = (await owner.json('GET', '/v1/billing/balance')).body.balance;
    expect(entries.reduce((n, e) => n + e.credits, 0)).to.be.closeTo(balance, 1e-6);
  });
});
