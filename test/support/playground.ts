/** Playground helpers for tests: a chat, a sent message, and waiting until the chat's runs settled. */
import type { Session } from './people';
import { startTestGateway, type TestGateway } from './gateway';
import { SmtpSink } from './notification-sinks';
import { freePort } from '../../stack/processes';

export async function newChat(s: Session, body: Record<string, unknown> = { model: 'sim-chat' }): Promise<any> {
  const res = await s.json('POST', '/api/playground/chats', body);
  if (res.status !== 201) throw new Error(`chat not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The chat once none of its messages is running (the reply was stored and its money settled). */
export async function settledChat(s: Session, chatId: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await s.json('GET', `/api/playground/chats/${chatId}`);
    if (res.status !== 200) throw new Error(`chat unreadable: ${res.status} ${JSON.stringify(res.body)}`);
    const running = res.body.messages.some((m: any) => m.status === 'running' || (m.role === 'assistant' && !m.receipt));
    if (!running) return res.body;
    if (Date.now() > deadline) throw new Error(`chat ${chatId} still running: ${JSON.stringify(res.body.messages)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** A gateway whose sign-ups and invitations are read from a local SMTP sink (both stopped with `stop`). */
export async function playgroundGateway(env: NodeJS.ProcessEnv = {}): Promise<{ gateway: TestGateway; smtp: SmtpSink; stop: () => Promise<void> }> {
  const smtp = new SmtpSink(await freePort());
  await smtp.start();
  const gateway = await startTestGateway({ env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400', ...env } });
  return { gateway, smtp, stop: async () => { await gateway.stop(); await smtp.stop(); } };
}
