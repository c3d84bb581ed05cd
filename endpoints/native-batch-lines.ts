/**
 * A batch's line served on its provider's own batch API (activities/native-batches.ts): the chat request the
 * line sends, exactly as the endpoint's synchronous call sends it, and the client's answer from the
 * provider's result, exactly as that call answers, charged at the model's batch price.
 */
import { batchCharge } from '../catalog/pricing';
import type { ModelRecord } from '../catalog/types';
import type { ChatRequest, ChatResult } from '../providers/types';
import type { ChatCompletionBody } from './chat/body';
import { chatOutcome, chatRequestOf, priceChat } from './chat/handler';
import { messagesOutcome } from './messages/handler';
import { nativeRequest, toChatBody, type MessagesRequest } from './messages/request';
import type { CallEnv, CallOutcome } from './types';

export interface NativeBatchLine {
  request(record: ModelRecord, body: unknown, env: Pick<CallEnv, 'db' | 'storage' | 'workspaceId'>): Promise<ChatRequest>;
  /** The client's answer and its charge (the list price of what the result used, less the batch discount). */
  answer(record: ModelRecord, body: unknown, result: ChatResult, env: Pick<CallEnv, 'requestId' | 'created'>): CallOutcome;
}

const LINES: Record<string, NativeBatchLine> = {
  '/v1/chat/completions': {
    request: (record, body, env) => chatRequestOf(record, body as ChatCompletionBody, env),
    answer(record, body, result, env) {
      const priced = priceChat(record, body as ChatCompletionBody, result);
      return chatOutcome(record, priced.result, batchCharge(record, priced.chargeMicro), env);
    },
  },
  '/v1/messages': {
    async request(record, body, env) {
      const req = body as MessagesRequest;
      return { ...(await chatRequestOf(record, toChatBody(req.body, record), env)), ...nativeRequest(req, record) };
    },
    answer(record, body, result, env) {
      const priced = priceChat(record, toChatBody((body as MessagesRequest).body, record), result);
      return messagesOutcome(record, priced.result, batchCharge(record, priced.chargeMicro), env);
    },
  },
};

/** How lines of a batch's endpoint (its URL) are served on a provider's batch API; undefined: they never are. */
export function nativeBatchLine(url: string): NativeBatchLine | undefined {
  return LINES[url];
}
