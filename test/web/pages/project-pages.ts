/** Page objects for Playground projects: the sidebar's list, a project's page, and its files offered in a chat. */
import type { Locator, Page } from 'playwright-core';

export class ProjectPage {
  constructor(readonly page: Page, private readonly base: string) {}

  sidebar(): Locator {
    return this.page.getByRole('region', { name: 'Projects' });
  }

  /** Creates a project from the sidebar and waits for its page; returns its id. */
  async create(name: string): Promise<string> {
    await this.page.goto(`${this.base}/playground`);
    await this.sidebar().getByRole('button', { name: 'New project' }).click();
    await this.sidebar().getByLabel('Project name').fill(name);
    await this.sidebar().getByRole('button', { name: 'Create project' }).click();
    await this.page.getByRole('heading', { name, level: 1 }).waitFor();
    return this.page.url().split('/').pop() as string;
  }

  async open(projectId: string): Promise<void> {
    await this.page.goto(`${this.base}/playground/projects/${projectId}`);
    await this.page.getByRole('heading', { level: 1 }).waitFor();
  }

  async setInstructions(text: string): Promise<void> {
    await this.page.getByLabel('Instructions').fill(text);
    await this.page.getByRole('button', { name: 'Save instructions' }).click();
    await this.page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  }

  async addFile(name: string, mimeType: string, buffer: Buffer): Promise<void> {
    await this.page.getByLabel('Add project file').setInputFiles({ name, mimeType, buffer });
    await this.page.getByRole('region', { name: 'Project files' }).getByRole('link', { name }).waitFor();
  }

  async pin(): Promise<void> {
    await this.page.getByRole('button', { name: 'Pin project' }).click();
    await this.page.getByRole('button', { name: 'Unpin project' }).waitFor();
  }

  /** Starts a chat in the project and waits for its composer; returns the chat's id. */
  async newChat(): Promise<string> {
    await this.page.getByRole('button', { name: 'New chat in project' }).click();
    await this.page.getByRole('textbox', { name: 'Message' }).waitFor();
    return this.page.url().split('/').pop() as string;
  }

  /** In a chat of the project: attaches one of the project's files to the next message. */
  async attachProjectFile(name: string): Promise<void> {
    await this.page.getByRole('button', { name: `Attach ${name}` }).click();
    await this.page.getByText(`Attached: ${name}`).waitFor();
  }

  async delete(): Promise<void> {
    await this.page.getByRole('button', { name: 'Delete project' }).click();
    await this.page.getByRole('alertdialog', { name: 'Delete project' }).getByRole('button', { name: 'Delete' }).click();
    await this.page.waitForURL(/\/playground$/);
  }
}
