/**
 * Playground projects in Chromium: a project created from the sidebar with instructions and a file, a chat
 * started in it whose reply shows the instructions reached the model (one more message in the conversation,
 * and a receipt equal to the API call that carries them as its system message), the project's file
 * attached and seen by the model, the storage page counting Playground files, an upload refused over the
 * limit with the API's message, and the project deleted while its chat stays.
 * Screenshot: docs/screenshots/playground-projects.png (with UPDATE_SCREENSHOTS=1).
 */
import { expect } from 'chai';
import sharp from 'sharp';
import { signUp } from '../support/people';
import { browserSuite } from './browser';
import { PlaygroundPage } from './pages/playground-pages';
import { ProjectPage } from './pages/project-pages';

describe('web app: Playground projects in Chromium', function () {
  this.timeout(240_000);
  const suite = browserSuite();

  it('creates a project with instructions and a file, chats in it, counts its storage and deletes it', async () => {
    const { gateway, smtp } = suite;
    const owner = await signUp(gateway.url, smtp, 'petra');
    const page = await suite.newPage({ viewport: { width: 1280, height: 900 }, cookie: owner.cookie });
    const projects = new ProjectPage(page, gateway.url);
    const chats = new PlaygroundPage(page, gateway.url);

    const projectId = await projects.create('Launch notes');
    await projects.setInstructions('Always answer in French.');
    const png = await sharp({ create: { width: 12, height: 10, channels: 3, background: '#c33' } }).png().toBuffer();
    await projects.addFile('red.png', 'image/png', png);
    await projects.pin();
    const project = projects.sidebar().getByRole('link', { name: /Launch notes/ });
    await project.filter({ has: project.page().getByRole('img', { name: 'pinned' }) }).waitFor();

    const chatId = await projects.newChat();
    await page.getByRole('group').filter({ hasText: 'In project Launch notes' }).waitFor();
    await chats.send('Hello');
    const first = await chats.settledReply();
    // The instructions are the conversation's system message: two messages, and the API's price for them.
    expect(await first.textContent()).to.match(/The conversation holds 2 messages\./);
    const key = await owner.json('POST', '/v1/organization/api_keys', { name: 'same', preset: 'custom' });
    const api = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key.body.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'system', content: 'Always answer in French.' }, { role: 'user', content: 'Hello' }] }),
    });
    expect(Number(api.headers.get('x-credits-used'))).to.equal(await chats.receiptCredits(first));

    await projects.attachProjectFile('red.png');
    await chats.send('What is in this picture?');
    expect(await (await chats.settledReply()).textContent()).to.match(/I see 1 image: a 12x10 PNG image/);
    await page.getByRole('img', { name: 'Attachment' }).waitFor();

    await projects.open(projectId);
    await page.getByRole('list', { name: 'Chats in this project' }).getByRole('link', { name: 'Hello' }).waitFor();
    await suite.shot(page, 'playground-projects');

    // The storage page counts the Playground's files; over the limit an upload is refused with the API's message.
    await page.goto(`${gateway.url}/settings/billing`);
    const playgroundBytes = page.getByTestId('storage-playground');
    await playgroundBytes.waitFor();
    expect(await playgroundBytes.textContent()).to.equal(`${png.length} B`);
    await page.getByText('Playground files (attachments, project files, generated images').waitFor();
    const workspaceId = (await owner.json('GET', '/api/me')).body.workspace.id;
    const { used_bytes: used } = (await owner.json('GET', '/api/playground/storage')).body;
    await gateway.runtime.db('workspaces').where({ id: workspaceId }).update({ storage_limit_bytes: used + 10 });
    await projects.open(projectId);
    await page.getByLabel('Add project file').setInputFiles({ name: 'big.txt', mimeType: 'text/plain', buffer: Buffer.alloc(100, 'x') });
    await page.getByRole('alert').filter({ hasText: "does not fit in the workspace's storage" }).waitFor();

    await projects.delete();
    await projects.sidebar().getByText('No projects.').waitFor();
    await chats.open(chatId);
    await page.getByRole('heading', { name: 'Hello', level: 1 }).waitFor();
    const consoleErrors = suite.consoleErrors().filter((e) => !/413/.test(e));
    expect(consoleErrors, 'console errors').to.deep.equal([]);
  });
});
