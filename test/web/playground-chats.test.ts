/**
 * Chats in the Playground, in Chromium. Branches: a reply asked again twice and a prompt edited once keep
 * every version (none is overwritten); "< i/n >" switches between them, each showing its own reply and
 * receipt; the branch on show survives a reload, and a new message continues it (the model is sent that
 * branch only). A short automatic title, renaming, export as Markdown and JSON (the downloaded files read),
 * and archiving (hidden from the list, listed under Archived, restored).
 * Screenshot: docs/screenshots/playground-branches.png (with UPDATE_SCREENSHOTS=1).
 */
import { expect } from 'chai';
import type { Locator } from 'playwright-core';
import type { TestGateway } from '../support/gateway';
import { signUp, type Session } from '../support/people';
import { browserSuite } from './browser';
import { PlaygroundPage } from './pages/playground-pages';

describe('web app: Playground chats (branches, titles, export, archive) in Chromium', function () {
  this.timeout(180_000);
  const suite = browserSuite();
  let gateway: TestGateway;
  let owner: Session;

  before(async () => {
    gateway = suite.gateway;
    owner = await signUp(gateway.url, suite.smtp, 'bruno');
  });

  const requestOf = (reply: Locator) => reply.locator('.receipt').getAttribute('data-request-id');
  const textOf = async (reply: Locator) => ((await reply.locator('.markdown').textContent()) ?? '').trim();

  it('keeps regenerated and edited versions as branches one switches between, each with its own reply and receipt', async () => {
    const page = new PlaygroundPage(await suite.newPage({ viewport: { width: 1280, height: 900 }, cookie: owner.cookie }), gateway.url);
    const chatId = await page.newChat();
    await page.send('Name a colour for a kitchen');
    const replies = [await page.settledReply()];
    const seen: Array<{ text: string; request: string | null; credits: number }> = [];
    const keep = async (reply: Locator) => seen.push({ text: await textOf(reply), request: await requestOf(reply), credits: await page.receiptCredits(reply) });
    await keep(replies[0]);
    // Another seed each time, so that each version of the reply reads differently.
    for (const seed of ['7', '8']) {
      await page.setParam('seed', seed);
      await keep(await page.regenerateReply());
    }
    expect(new Set(seen.map((s) => s.text)).size, 'three different replies').to.equal(3);
    expect(new Set(seen.map((s) => s.request)).size, 'three requests').to.equal(3);
    for (const s of seen) expect(s.credits).to.be.greaterThan(0);
    expect(await page.branchPosition(page.lastReply())).to.equal('3/3');

    const prompt = () => page.page.getByRole('article', { name: 'user message' }).first();
    const edited = await page.editPrompt(prompt(), 'Name a colour for a bathroom');
    expect(await textOf(edited)).to.match(/bathroom/);
    expect(await page.branchPosition(prompt())).to.equal('2/2');
    expect(await edited.getByTestId('branch-position').count(), 'one reply on the edited branch').to.equal(0);

    // Back to the first prompt: its newest reply, then the one before it, each with its own receipt.
    await page.switchBranch(prompt(), 'Previous', '1/2');
    await page.page.getByRole('article', { name: 'user message' }).filter({ hasText: 'kitchen' }).waitFor();
    expect(await page.branchPosition(page.lastReply())).to.equal('3/3');
    expect(await textOf(page.lastReply())).to.equal(seen[2].text);
    expect(await requestOf(page.lastReply())).to.equal(seen[2].request);
    await page.switchBranch(page.lastReply(), 'Previous', '2/3');
    await page.page.locator('.receipt').and(page.page.locator(`[data-request-id="${seen[1].request}"]`)).waitFor();
    expect(await textOf(page.lastReply())).to.equal(seen[1].text);
    expect(await page.receiptCredits(page.lastReply())).to.equal(seen[1].credits);
    await page.switchBranch(page.lastReply(), 'Previous', '1/3');
    await page.page.locator(`[data-request-id="${seen[0].request}"]`).waitFor();
    expect(await textOf(page.lastReply())).to.equal(seen[0].text);
    await page.switchBranch(page.lastReply(), 'Next', '2/3');
    await page.page.locator(`[data-request-id="${seen[1].request}"]`).waitFor();

    // The chat remembers the branch on show.
    await page.page.reload();
    await page.page.locator(`[data-request-id="${seen[1].request}"]`).waitFor();
    expect(await page.branchPosition(prompt())).to.equal('1/2');
    expect(await page.branchPosition(page.lastReply())).to.equal('2/3');
    await suite.shot(page.page, 'playground-branches');

    // A new message continues this branch: the model reads its prompt, this reply and the new message only.
    await page.send('And a second one?');
    const next = await page.settledReply();
    expect(await textOf(next)).to.match(/The conversation holds 3 messages\./);
    const chat = (await owner.json('GET', `/api/playground/chats/${chatId}`)).body;
    expect(chat.messages.map((m: any) => m.request_id).filter(Boolean).slice(0, 1)).to.deep.equal([seen[1].request]);
    expect(chat.messages).to.have.length(4);
    // Every version is still there, with its receipt.
    for (const s of seen) {
      const branch = (await owner.json('GET', `/api/playground/chats/${chatId}?branch=${chat.messages[1].siblings[seen.indexOf(s)]}`)).body;
      expect(branch.messages[1]).to.include({ request_id: s.request, content: s.text });
      expect(branch.messages[1].receipt.credits).to.equal(s.credits);
    }
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });

  it('titles a chat from its first prompt, renames it, exports it as Markdown and JSON, and archives and restores it', async () => {
    const page = new PlaygroundPage(await suite.newPage({ viewport: { width: 1280, height: 900 }, cookie: owner.cookie }), gateway.url);
    const chatId = await page.newChat();
    await page.send('Plan a **three-day** trip to `Lisbon` in spring. Include food.');
    const reply = await page.settledReply();
    await page.page.getByRole('heading', { level: 1, name: 'Plan a three-day trip to Lisbon…' }).waitFor();
    await page.chatLinks().filter({ hasText: 'Plan a three-day trip to Lisbon…' }).waitFor();

    await page.rename('Lisbon in spring');
    await page.chatLinks().filter({ hasText: 'Lisbon in spring' }).waitFor();
    await page.page.reload();
    await page.page.getByRole('heading', { level: 1, name: 'Lisbon in spring' }).waitFor();
    expect((await owner.json('PATCH', `/api/playground/chats/${chatId}`, { title: '  ' })).body.error).to.include({ param: 'title' });

    const request = await requestOf(reply);
    const credits = await page.receiptCredits(reply);
    const md = await page.exportChat('Markdown');
    expect(md.name).to.equal('Lisbon-in-spring.md');
    expect(md.text).to.include('# Lisbon in spring\n');
    expect(md.text).to.include('## User\n\nPlan a **three-day** trip to `Lisbon` in spring. Include food.\n');
    expect(md.text).to.include('## Assistant (sim-chat)\n\nSimulated reply to');
    expect(md.text).to.include(`_${credits} credits · served by sim-chat · request ${request}_`);
    const json = await page.exportChat('JSON');
    expect(json.name).to.equal('Lisbon-in-spring.json');
    const exported = JSON.parse(json.text);
    expect(exported).to.include({ id: chatId, title: 'Lisbon in spring', model: 'sim-chat' });
    expect(exported.messages.map((m: any) => m.role)).to.deep.equal(['user', 'assistant']);
    expect(exported.messages[1]).to.include({ request_id: request, credits, model_used: 'sim-chat', status: 'completed' });
    const stored = (await owner.json('GET', `/api/playground/chats/${chatId}`)).body.messages;
    expect(exported.messages.map((m: any) => m.content)).to.deep.equal(stored.map((m: any) => m.content));
    expect(md.text).to.include(`${stored[1].content}\n`);

    await page.page.getByRole('button', { name: 'Archive', exact: true }).click();
    await page.page.waitForURL(`${gateway.url}/playground`);
    await page.page.getByRole('heading', { level: 1, name: 'Lisbon in spring' }).waitFor({ state: 'detached' });
    await page.chatLinks().filter({ hasText: 'Lisbon in spring' }).waitFor({ state: 'detached' });
    await page.toggleArchivedView(true);
    await page.page.getByRole('heading', { name: 'Archived chats' }).waitFor();
    await page.chatLinks().filter({ hasText: 'Lisbon in spring' }).click();
    await page.page.getByText('archived', { exact: true }).waitFor();
    await page.page.getByRole('button', { name: 'Restore' }).click();
    await page.page.getByRole('button', { name: 'Archive', exact: true }).waitFor();
    await page.page.getByText('No archived chats.').waitFor();
    await page.toggleArchivedView(false);
    await page.chatLinks().filter({ hasText: 'Lisbon in spring' }).waitFor();
    // Archiving is the owner's (a reader of a shared chat cannot hide it from everyone), and takes true or false.
    expect((await owner.json('PATCH', `/api/playground/chats/${chatId}`, { archived: true })).status).to.equal(200);
    expect((await owner.json('PATCH', `/api/playground/chats/${chatId}`, { archived: false })).status).to.equal(200);
    expect((await owner.json('PATCH', `/api/playground/chats/${chatId}`, { archived: 'yes' })).status).to.equal(400);
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });

  it('refuses a regenerate or a branch naming no message of the chat, in the route\'s shape', async () => {
    const chat = (await owner.json('POST', '/api/playground/chats', { model: 'sim-chat' })).body;
    const regen = await owner.json('POST', `/api/playground/chats/${chat.id}/messages`, { regenerate: 'msg_nope' });
    expect(regen.status).to.equal(404);
    expect(regen.body.error).to.include({ code: 'message_not_found', param: 'regenerate' });
    const branch = await owner.json('PATCH', `/api/playground/chats/${chat.id}`, { branch: 'msg_nope' });
    expect(branch.status).to.equal(404);
    expect(branch.body.error).to.include({ code: 'message_not_found', param: 'branch' });
    const bad = await owner.json('PATCH', `/api/playground/chats/${chat.id}`, { branch: 5 });
    expect(bad.status).to.equal(400);
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}?branch=msg_nope`)).status).to.equal(404);
  });
});
