/**
 * The Playground in Chromium: a streamed reply rendered as markdown that survives a refresh mid-stream, its
 * receipt equal to the x-credits-used of the same request sent to the API (both in the same ledger), an
 * image generation, an attached file the model reads, a chat shared with one teammate and not another, a
 * bookmark, a compare of two models, speech with a chosen voice and a video job played after a refresh,
 * regenerating an image and a video from their requests, and audio recorded in the page (Chromium's fake
 * microphone) and transcribed.
 * Screenshots go to docs/screenshots/playground-*.png (with UPDATE_SCREENSHOTS=1).
 */
import { expect } from 'chai';
import sharp from 'sharp';
import type { TestGateway } from '../support/gateway';
import type { SmtpSink } from '../support/notification-sinks';
import { invitedMember, signUp, type Session } from '../support/people';
import { browserSuite } from './browser';
import { PlaygroundPage } from './pages/playground-pages';
import { BillingPage } from './pages/settings-pages';

describe('web app: the Playground in Chromium', function () {
  this.timeout(240_000);
  const suite = browserSuite({ providerOverrides: { simulated: { headers: { 'x-sim-stream-delay-ms': '150' } } } });
  // Slow deltas (above), so that a refresh lands in the middle of a reply.
  let gateway: TestGateway;
  let smtp: SmtpSink;
  let owner: Session;
  let teammate: Session;
  let third: Session;

  before(async () => {
    ({ gateway, smtp } = suite);
    owner = await signUp(gateway.url, smtp, 'paula');
    teammate = await invitedMember(gateway.url, smtp, owner, 'theo', 'developer');
    third = await invitedMember(gateway.url, smtp, owner, 'thea', 'developer');
  });

  async function signedIn(session: Session, watchConsole = true): Promise<PlaygroundPage> {
    const page = await suite.newPage({ viewport: { width: 1280, height: 900 }, cookie: session.cookie, watchConsole });
    return new PlaygroundPage(page, gateway.url);
  }
  const shot = (p: PlaygroundPage, name: string) => suite.shot(p.page, `playground-${name}`);

  let chatId: string;
  let ownerPage: PlaygroundPage;

  it('streams a reply as markdown, which completes after a refresh mid-stream, with a receipt equal to the API call', async () => {
    ownerPage = await signedIn(owner);
    chatId = await ownerPage.newChat();
    const prompt = 'Show **bold** text and `inline code`, please, with a long enough question to stream for a while';
    await ownerPage.send(prompt);
    await ownerPage.lastReply().getByText('Simulated').waitFor();
    expect(await ownerPage.lastReply().getAttribute('data-status')).to.equal('running');
    await ownerPage.page.reload();
    const reply = await ownerPage.settledReply();
    expect(await reply.locator('.markdown strong').first().textContent()).to.equal('bold');
    expect(await reply.locator('.markdown code').first().textContent()).to.equal('inline code');
    expect(await reply.locator('.markdown').textContent()).to.match(/The conversation holds 1 message\./);
    const credits = await ownerPage.receiptCredits(reply);
    await reply.getByRole('button', { name: 'Timeline' }).click();
    await reply.getByRole('list', { name: 'Run timeline' }).getByText('settled', { exact: true }).waitFor();
    await shot(ownerPage, 'chat');

    const key = await owner.json('POST', '/v1/organization/api_keys', { name: 'compare', preset: 'custom' });
    const api = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key.body.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: prompt }] }),
    });
    expect(Number(api.headers.get('x-credits-used'))).to.equal(credits).and.to.be.greaterThan(0);
    const workspaceId = (await owner.json('GET', '/api/me')).body.workspace.id;
    const requests = await gateway.runtime.db('credit_ledger').where({ workspace_id: workspaceId, kind: 'settle' }).pluck('request_id');
    expect(requests).to.include(api.headers.get('x-request-id'));
    expect(requests.length).to.equal(2);
  });

  /** The generations of `kind` at a chat's last turn: every branch there (read through each sibling), oldest first. */
  async function generationsAtLastTurn(id: string, kind: string): Promise<any[]> {
    const last = (await owner.json('GET', `/api/playground/chats/${id}`)).body.messages.at(-1);
    expect(last.kind).to.equal(kind);
    const branches = await Promise.all(last.siblings.map((s: string) => owner.json('GET', `/api/playground/chats/${id}?branch=${s}`)));
    return branches.map((b) => b.body.messages.at(-1));
  }

  it('generates an image in the chat, regenerates it with the same request, and reads an attached file', async () => {
    await ownerPage.generateImage('a lighthouse at dawn');
    await shot(ownerPage, 'image');
    // Regenerating an image makes another from the same request: a branch beside the first (not a chat reply), both kept.
    await ownerPage.regenerate();
    await ownerPage.lastReply().getByTestId('branch-position').filter({ hasText: '2/2' }).waitFor();
    await ownerPage.page.getByRole('img', { name: 'Generated image' }).waitFor();
    const images = await generationsAtLastTurn(chatId, 'image');
    expect(images.map((m: any) => m.generation)).to.deep.equal([0, 1].map(() => ({ endpoint: 'images', body: { model: 'sim-image', prompt: 'a lighthouse at dawn', size: '256x256' } })));
    expect(new Set(images.map((m: any) => m.request_id)).size).to.equal(2);
    await ownerPage.switchBranch(ownerPage.lastReply(), 'Previous', '1/2');
    await ownerPage.page.getByRole('img', { name: 'Generated image' }).waitFor();
    const png = await sharp({ create: { width: 12, height: 10, channels: 3, background: '#36c' } }).png().toBuffer();
    await ownerPage.attach('blue.png', 'image/png', png);
    await ownerPage.send('What is in this picture?');
    const reply = await ownerPage.settledReply();
    expect(await reply.textContent()).to.match(/I see 1 image: a 12x10 PNG image/);
    await ownerPage.page.getByRole('img', { name: 'Attachment' }).waitFor();
  });

  it('shares the chat with a teammate, who reads it, while a third member cannot; and bookmarks a reply', async () => {
    // The Share dialog takes the focus and closes on Escape, giving it back to its button.
    await ownerPage.page.getByRole('button', { name: 'Share' }).click();
    const dialog = ownerPage.page.getByRole('dialog', { name: 'Share chat' });
    expect(await dialog.evaluate((d: any) => d.contains(d.ownerDocument.activeElement))).to.equal(true);
    await ownerPage.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await ownerPage.page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).to.equal('Share');
    await ownerPage.shareWith(teammate.email, 'read');
    const mate = await signedIn(teammate);
    await mate.open(chatId);
    await mate.page.getByText('shared with you · read').waitFor();
    await mate.page.locator('.markdown strong').first().waitFor();
    // The owner's prompts read with the owner's name, not "You".
    await mate.page.getByRole('article', { name: 'user message' }).first().locator('.message-head').getByText('paula', { exact: true }).waitFor();
    expect(await mate.page.getByRole('textbox', { name: 'Message' }).count()).to.equal(0);
    await shot(mate, 'shared');

    // The third member's browser logs the 404 it gets, which is the point here.
    const other = await signedIn(third, false);
    await other.open(chatId);
    // A 404 is shown at once, not after retries.
    await other.page.getByRole('alert').filter({ hasText: `No chat with id '${chatId}'` }).waitFor({ timeout: 3_000 });

    await ownerPage.bookmarkLastReply();
    await ownerPage.bookmarks().filter({ hasText: 'What is in this picture' }).waitFor();
  });

  it('sends with Enter, keeps Shift+Enter as a new line, and says so under the box', async () => {
    await ownerPage.page.getByText('Enter sends · Shift+Enter starts a new line').waitFor();
    await ownerPage.sendByKeyboard(['First line', 'second line']);
    await ownerPage.settledReply();
    expect(await ownerPage.page.getByRole('textbox', { name: 'Message' }).inputValue()).to.equal('');
    const messages = (await owner.json('GET', `/api/playground/chats/${chatId}`)).body.messages;
    expect(messages.filter((m: any) => m.role === 'user').at(-1).content).to.equal('First line\nsecond line');
  });

  it('sets LaTeX as math and gives every code block a Copy button', async () => {
    await ownerPage.send('Euler: $e^{i\\pi} + 1 = 0$, costs $5 and $6\n\n$$\\int_0^1 x^2 dx = \\frac{1}{3}$$\n\n```js\nconst answer = 42;\n```');
    await ownerPage.settledReply();
    const mine = ownerPage.page.getByRole('article', { name: 'user message' }).last();
    expect(await mine.locator('.markdown math').count()).to.equal(2);
    expect(await mine.locator('.markdown math[display=block]').count()).to.equal(1);
    expect(await mine.locator('.markdown').textContent()).to.include('costs $5 and $6');
    await ownerPage.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gateway.url });
    await mine.getByRole('button', { name: 'Copy' }).click();
    await mine.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await ownerPage.page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).to.equal('const answer = 42;');
  });

  it('compares two models side by side, each with its cost and latency', async () => {
    const [a, b] = await ownerPage.compare('Which is cheaper?', ['sim-chat', 'sim-chat-mini']);
    expect(await a.locator('.receipt').textContent()).to.match(/served by sim-chat .* ms/);
    expect(await b.locator('.receipt').textContent()).to.match(/served by sim-chat-mini .* ms/);
    await shot(ownerPage, 'compare');
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });

  it('speaks with a chosen voice into a player, and shows a video job progressing, then playing after a refresh', async () => {
    const mediaChat = await ownerPage.newChat();
    await ownerPage.generateMedia('Speech', 'Hello from the browser', { Voice: 'echo' });
    const audio = ownerPage.page.getByLabel('Generated audio');
    await audio.waitFor({ timeout: 30_000 });
    await ownerPage.page.waitForFunction((a: any) => a.readyState >= 1 && a.duration > 0, await audio.elementHandle());

    await ownerPage.generateMedia('Video', 'A lighthouse at dusk', { duration: '2', resolution: '360p' });
    await ownerPage.page.getByLabel('Video progress').waitFor();
    await ownerPage.open(mediaChat);
    const video = ownerPage.page.getByLabel('Generated video');
    await video.waitFor({ timeout: 60_000 });
    await ownerPage.page.waitForFunction((v: any) => v.readyState >= 1 && v.videoWidth > 0, await video.elementHandle(), { timeout: 30_000 });
    const reply = await ownerPage.settledReply();
    expect(await ownerPage.receiptCredits(reply)).to.be.greaterThan(0);
    await shot(ownerPage, 'media');

    // Regenerate under a video makes another video job from the same request, a branch beside the first.
    await ownerPage.regenerate();
    await ownerPage.lastReply().getByTestId('branch-position').filter({ hasText: '2/2' }).waitFor();
    await ownerPage.page.getByLabel('Generated video').waitFor({ timeout: 60_000 });
    const videos = await generationsAtLastTurn(mediaChat, 'video');
    expect(videos.map((m: any) => m.generation.body)).to.deep.equal([0, 1].map(() => ({ model: 'sim-video', prompt: 'A lighthouse at dusk', duration: 2, resolution: '360p', aspect_ratio: '16:9' })));
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });

  it('records audio in the page, uploads it to the chat and transcribes it', async () => {
    const chat = await ownerPage.newChat();
    await ownerPage.recordAndTranscribe(2_000);
    const reply = await ownerPage.settledReply();
    expect((await reply.locator('.markdown').textContent())?.trim()).to.match(/^[A-Z].+\.$/);
    await ownerPage.page.getByLabel('Attached audio recording.webm').waitFor();

    const [upload, transcript] = (await owner.json('GET', `/api/playground/chats/${chat}`)).body.messages;
    expect(upload.attachments).to.have.length(1);
    expect(upload.attachments[0]).to.include({ filename: 'recording.webm', content_type: 'audio/webm' });
    expect(transcript.receipt).to.include({ endpoint: 'audio.transcriptions', status: 'succeeded' });
    // The recording's length is read from its WebM container: about the two seconds recorded.
    expect(transcript.receipt.units.audio_ms).to.be.within(1_000, 4_000);
    expect(transcript.generation).to.deep.equal({ endpoint: 'transcriptions', body: { model: 'sim-transcribe', file_id: upload.files[0] } });
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });

  it('shows what a member spent in the Playground as a bar of its own in usage by member', async () => {
    const billing = new BillingPage(ownerPage.page, gateway.url);
    await billing.open();
    const bars = await billing.usageBars('By member');
    const playground = bars.get(`paula (${owner.email}) · Playground`);
    const viaKeys = bars.get(`paula (${owner.email})`);
    expect(playground).to.be.greaterThan(0);
    // The only API call was the one compared with the first reply.
    expect(viaKeys).to.be.greaterThan(0).and.to.be.lessThan(playground!);
    expect(bars.has('operator')).to.equal(false);
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });
});
