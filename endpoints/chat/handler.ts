/** `POST /v1/chat/completions` (non-streaming) as an endpoint handler. */
import { validateModelParams } from '../../catalog/params';
import { chatCost, estimateChatReservation } from '../../catalog/pricing';
import type { ChatCompletionBody } from './body';
import { chatModelParams, chatNeeds, checkChatCapabilities, checkChatParams, choiceCount, promptCharacters, requestedMaxTokens, toChatRequest } from './request';
import { chatCompletionObject } from './response';
import { estimateTokens } from './tokens';
import { microToCredits } from '../../core/money';
import { fileReferences, inlineReferencedFiles } from './file-references';
import { InternalError } from '../../core/errors';
import type { ModelRecord } from '../../catalog/types';
import type { ChatRequest, ChatResult, TokenUsage } from '../../providers/types';
import type { CallEnv, CallOutcome, EndpointHandler } from '../types';
import { modelAdapter } from '../model-adapter';
import { generateChoices } from './choices';

export function checkChatRequest(record: ModelRecord, body: ChatCompletionBody): void {
  checkChatParams(body);
  checkChatCapabilities(record, chatNeeds(body));
  validateModelParams(record, chatModelParams(body));
}

/** The prompt and the longest answer, once per choice (fanned-out choices each send the prompt). */
export function estimateChat(record: ModelRecord, body: ChatCompletionBody): number {
  return choiceCount(body) * estimateChatReservation(record, { promptChars: promptCharacters(body), maxTokens: requestedMaxTokens(body) });
}

export const chatHandler: EndpointHandler<ChatCompletionBody> = {
  endpoint: 'chat.completions',
  modality: 'chat',
  check: checkChatRequest,
  estimate: estimateChat,

  async call(record, body, env) {
    const { result, chargeMicro } = await generateChat(record, body, env);
    return chatOutcome(record, result, chargeMicro, env);
  },
};

/** The client's chat completion for a result, and what it is charged (`chargeMicro`, shown as `credits_used`). */
export function chatOutcome(record: ModelRecord, result: ChatResult, chargeMicro: number, env: Pick<CallEnv, 'requestId' | 'created'>): CallOutcome {
  const completion = chatCompletionObject({ requestId: env.requestId, created: env.created, model: record.slug, result });
  return {
    response: { kind: 'json', body: { ...completion, credits_used: microToCredits(chargeMicro) } },
    chargeMicro,
    usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
  };
}

/** The chat request a body sends to the record's provider (uploaded files named by id inlined). */
export async function chatRequestOf(record: ModelRecord, body: ChatCompletionBody, env: Pick<CallEnv, 'db' | 'storage' | 'workspaceId'>): Promise<ChatRequest> {
  return toChatRequest(await withFileContents(body, record, env), record);
}

/** Calls the model for every choice and prices what it used (`extra`: what an endpoint adds to the chat request). */
export async function generateChat(record: ModelRecord, body: ChatCompletionBody, env: CallEnv, extra: Partial<ChatRequest> = {}): Promise<{ result: ChatResult; chargeMicro: number }> {
  const adapter = modelAdapter(env, record, 'chat');
  const request = { ...(await chatRequestOf(record, body, env)), ...extra };
  const result = await generateChoices(adapter, request, choiceCount(body), { requestId: env.requestId, simulate: env.simulate, signal: env.signal });
  return priceChat(record, body, result);
}

/** What a chat result costs at list price; hosts that report no usage are billed on an estimate rather than for free. */
export function priceChat(record: ModelRecord, body: ChatCompletionBody, result: ChatResult): { result: ChatResult; chargeMicro: number } {
  const choices = [result, ...(result.moreChoices ?? [])];
  const usage = result.usage.inputTokens + result.usage.outputTokens > 0
    ? result.usage
    : {
      inputTokens: choices.length * estimateTokens(promptCharacters(body)),
      outputTokens: choices.reduce((sum, c) => sum + estimateTokens((c.content ?? '').length + JSON.stringify(c.toolCalls).length), 0),
    };
  return { result: { ...result, usage }, chargeMicro: chatCost(record, usage) };
}

/** Prompt tokens written to or read from the provider's prompt cache, as the usage record's units (undefined: none). */
export function cacheUnits(usage: TokenUsage): Record<string, number> | undefined {
  const written = (usage.cacheWriteTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
  const read = usage.cacheReadTokens ?? 0;
  if (written + read === 0) return undefined;
  return { ...(written > 0 ? { cache_creation_input_tokens: written } : {}), ...(read > 0 ? { cache_read_input_tokens: read } : {}) };
}

/** Uploaded files named by id reach the provider as their bytes (providers cannot read our storage). */
export async function withFileContents(body: ChatCompletionBody, record: ModelRecord, env: Pick<CallEnv, 'db' | 'storage' | 'workspaceId'>): Promise<ChatCompletionBody> {
  if (fileReferences(body.messages).length === 0) return body;
  if (!env.workspaceId || !env.db) throw new InternalError('file references need the workspace of the request');
  const messages = await inlineReferencedFiles(body.messages, {
    db: env.db, storage: env.storage, workspaceId: env.workspaceId, imagesAsImageUrl: Boolean(record.capabilities.vision),
  });
  return { ...body, messages };
}
