/** `POST /v1/chat/completions` (non-streaming) as an endpoint handler. */
import { validateModelParams } from '../../catalog/params';
import { chatCost, estimateChatReservation } from '../../catalog/pricing';
import type { ChatCompletionBody } from './body';
import { chatModelParams, chatNeeds, checkChatCapabilities, promptCharacters, requestedMaxTokens, toChatRequest } from './request';
import { chatCompletionObject } from './response';
import { estimateTokens } from './tokens';
import { microToCredits } from '../../core/money';
import { fileReferences, inlineReferencedFiles } from './file-references';
import { InternalError } from '../../core/errors';
import type { ModelRecord } from '../../catalog/types';
import type { CallEnv, EndpointHandler } from '../types';
import { modelAdapter } from '../model-adapter';

export const chatHandler: EndpointHandler<ChatCompletionBody> = {
  endpoint: 'chat.completions',
  modality: 'chat',

  check(record, body) {
    checkChatCapabilities(record, chatNeeds(body));
    validateModelParams(record, chatModelParams(body));
  },

  estimate(record, body) {
    return estimateChatReservation(record, { promptChars: promptCharacters(body), maxTokens: requestedMaxTokens(body) });
  },

  async call(record, body, env) {
    const adapter = modelAdapter(env.providers, record, 'chat');
    const request = toChatRequest(await withFileContents(body, record, env), record);
    const result = await adapter.doGenerate(request, {
      requestId: env.requestId, simulate: env.simulate, signal: env.signal,
    });
    // Hosts that report no usage are billed on an estimate rather than for free.
    const usage = result.usage.inputTokens + result.usage.outputTokens > 0
      ? result.usage
      : { inputTokens: estimateTokens(promptCharacters(body)), outputTokens: estimateTokens((result.content ?? '').length + JSON.stringify(result.toolCalls).length) };
    const chargeMicro = chatCost(record, usage);
    const completion = chatCompletionObject({ requestId: env.requestId, created: env.created, model: record.slug, result: { ...result, usage } });
    return {
      response: { kind: 'json', body: { ...completion, credits_used: microToCredits(chargeMicro) } },
      chargeMicro,
      usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
    };
  },
};

/** Uploaded files named by id reach the provider as their bytes (providers cannot read our storage). */
async function withFileContents(body: ChatCompletionBody, record: ModelRecord, env: CallEnv): Promise<ChatCompletionBody> {
  if (fileReferences(body.messages).length === 0) return body;
  if (!env.workspaceId || !env.db) throw new InternalError('file references need the workspace of the request');
  const messages = await inlineReferencedFiles(body.messages, {
    db: env.db, storage: env.storage, workspaceId: env.workspaceId, imagesAsImageUrl: Boolean(record.capabilities.vision),
  });
  return { ...body, messages };
}
