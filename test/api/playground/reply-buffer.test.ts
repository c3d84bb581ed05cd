import { expect } from 'chai';
import { ReplyBuffer } from '../../../api/playground/reply-buffer';

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
const write = (buffer: ReplyBuffer, text: string) => new Promise<void>((resolve, reject) => buffer.write(text, (err) => (err ? reject(err) : resolve())));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('api/playground/reply-buffer: a streaming reply kept beyond the page and the process', () => {
  it('hands the text so far to persist while it grows, at most once per interval, and stops once settled', async () => {
    const saved: string[] = [];
    const buffer = new ReplyBuffer(async (text) => { saved.push(text); }, 30);
    await write(buffer, chunk('Durable '));
    await write(buffer, chunk('runs '));
    expect(saved).to.deep.equal([]); // not on every delta
    await pause(60);
    expect(saved).to.deep.equal(['Durable runs ']);
    await write(buffer, chunk('outlive '));
    await write(buffer, `${chunk('crashes.')}data: [DONE]\n\n`);
    await pause(60);
    expect(saved).to.deep.equal(['Durable runs ', 'Durable runs outlive crashes.']);
    expect(buffer.text).to.equal('Durable runs outlive crashes.');

    await write(buffer, chunk(' More'));
    buffer.settle();
    await pause(60);
    expect(saved).to.have.length(2); // the run's outcome writes the final text, not the buffer
  });

  it('gives every page that attaches the text so far, then the deltas, then done', async () => {
    const buffer = new ReplyBuffer();
    await write(buffer, chunk('Hello'));
    const seen: Array<{ delta?: string; done?: boolean }> = [];
    buffer.attach((e) => seen.push(e));
    await write(buffer, chunk(', world'));
    buffer.settle();
    expect(seen).to.deep.equal([{ delta: 'Hello' }, { delta: ', world' }, { done: true }]);
  });
});
