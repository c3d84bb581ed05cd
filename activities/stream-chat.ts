/**
 * The streaming chat call. It runs on the task queue of the API process that holds the client's connection
 * and writes chunks straight to it. Before the first byte a failure is thrown (the workflow may retry or
 * fall back); after it, every ending (finish, upstream error, client gone) is returned with what was used,
 * so the workflow settles exactly that. Heartbeats carry the running usage in case this process dies.
 */
import { activityInfo, heartbeat } from '@temporalio/activity';
import { chatCost } from '../catalog/pricing';
import type { ChatCompletionBody } from '../endpoints/chat/body';
import type { StreamRegistry } from './stream-registry';
import { fileReferences, inlineReferencedFiles } from '../endpoints/chat/file-references';
import { choiceCount, promptCharacters, toChatRequest } from '../endpoints/chat/request';
import { streamChoices } from '../endpoints/chat/choices';
import { chunkObject, openAIFinishReason, usageObject } from '../endpoints/chat/response';
import { estimateTokens } from '../endpoints/chat/tokens';
import { GatewayError, NotFoundError, UpstreamError } from '../core/errors';
import { microToCredits } from '../core/money';
import { modelAdapter } from '../endpoints/model-adapter';
import type { ChatStreamPart, FinishReason, SimulationDirective } from '../providers/types';
import type { ActivityDeps } from './deps';
import { loadPayload, type PayloadRef } from './request-io';

export interface StreamChatInput {
  requestId: string;
  model: string;
  body: PayloadRef<unknown>;
  created: number;
  fallbackFrom: string | null;
  fallbackDepth: number;
  simulate?: SimulationDirective;
  /** The requesting workspace (its uploaded files may be named in the messages). */
  workspaceId?: string;
}

/** `not_here`: this process does not hold the request's connection (the workflow then asks the one that does). */
export type StreamEnding = 'completed' | 'client_disconnected' | 'upstream_error' | 'not_here';

export interface StreamChatOutcome {
  ending: StreamEnding;
  inputTokens: number;
  outputTokens: number;
  chargeMicro: number;
  finishReason: FinishReason | null;
  error?: string;
}

/** What a heartbeat carries: enough to bill the generated part if this process dies mid-stream. */
export interface StreamProgress {
  inputTokens: number;
  outputChars: number;
}

export function createStreamActivities(deps: ActivityDeps & { streams: StreamRegistry }) {
  return {
    async streamChat(input: StreamChatInput): Promise<StreamChatOutcome> {
      const attempt = activityInfo().attempt;
      const sink = deps.streams.get(input.requestId);
      const none: StreamChatOutcome = { ending: 'client_disconnected', inputTokens: 0, outputTokens: 0, chargeMicro: 0, finishReason: null };
      if (!sink) return { ...none, ending: 'not_here' };
      if (sink.clientGone) return none;

      const record = await deps.catalog.get(input.model);
      if (!record) throw new NotFoundError(`The model '${input.model}' does not exist.`, { code: 'model_not_found' });
      const body = (await loadPayload(deps.storage, input.body)) as ChatCompletionBody;
      const includeUsage = Boolean(body.stream_options?.include_usage);
      const choices = choiceCount(body);
      const promptTokensEstimate = estimateTokens(promptCharacters(body));
      const abort = new AbortController();
      sink.onClientGone(() => abort.abort());

      let iterator: AsyncIterator<ChatStreamPart>;
      let first: IteratorResult<ChatStreamPart>;
      try {
        const adapter = modelAdapter(deps.providers, record, 'chat');
        const messages = fileReferences(body.messages).length === 0 ? body.messages : await inlineReferencedFiles(body.messages, {
          db: deps.db, storage: deps.storage, workspaceId: input.workspaceId ?? '', imagesAsImageUrl: Boolean(record.capabilities.vision),
        });
        iterator = streamChoices(adapter, toChatRequest({ ...body, messages }, record), choices, {
          requestId: input.requestId, signal: abort.signal, simulate: input.simulate ? { ...input.simulate, attempt } : undefined,
        })[Symbol.asyncIterator]();
        first = await iterator.next();
      } catch (err) {
        if (sink.clientGone) return none;
        throw err; // before the first byte: retried or fallen back under the one failure policy
      }

      const base = { requestId: input.requestId, created: input.created, model: record.slug };
      sink.start({
        'x-model-used': record.slug,
        ...(input.fallbackFrom ? { 'x-fallback-from': input.fallbackFrom, 'x-fallback-depth': String(input.fallbackDepth) } : {}),
      });
      for (let index = 0; index < choices; index++) sink.send(chunkObject({ ...base, index, delta: { role: 'assistant', content: '' } }));

      let outputChars = 0;
      let usage: { inputTokens: number; outputTokens: number } | null = null;
      let finishReason: FinishReason | null = null;
      let finishReasons: FinishReason[] = [];
      let ending: StreamEnding = 'completed';
      let error: string | undefined;
      let lastBeat = 0;
      const beat = () => {
        const now = Date.now();
        if (now - lastBeat > 1000) {
          lastBeat = now;
          heartbeat({ inputTokens: promptTokensEstimate, outputChars } satisfies StreamProgress);
        }
      };
      try {
        for (let step = first; !step.done; step = await iterator.next()) {
          const part = step.value;
          if (part.type === 'text-delta') {
            outputChars += part.delta.length;
            sink.send(chunkObject({ ...base, index: part.choice, delta: { content: part.delta }, logprobs: part.logprobs }));
          } else if (part.type === 'tool-call-delta') {
            outputChars += part.argumentsDelta.length + (part.name?.length ?? 0);
            sink.send(chunkObject({ ...base, index: part.choice, delta: { tool_calls: [{ index: part.index, ...(part.id ? { id: part.id, type: 'function' } : {}), function: { ...(part.name ? { name: part.name } : {}), arguments: part.argumentsDelta } }] } }));
          } else {
            finishReason = part.finishReason;
            finishReasons = part.finishReasons ?? [part.finishReason];
            if (part.usage.inputTokens + part.usage.outputTokens > 0) usage = part.usage;
          }
          if (sink.clientGone) break;
          beat();
        }
      } catch (err) {
        if (!sink.clientGone) {
          ending = 'upstream_error';
          const gw = err instanceof GatewayError ? err : new UpstreamError(String(err), { kind: 'network', provider: record.provider });
          error = gw.message;
          sink.send({ error: { message: gw.message, type: gw.type, param: null, code: gw.code } });
        }
      }
      if (sink.clientGone) {
        ending = 'client_disconnected';
        abort.abort();
        await iterator.return?.().catch(() => undefined);
      }

      // The provider's count when it gave one; otherwise (and for cut-off streams) an estimate of what was generated.
      const billed = usage && ending === 'completed'
        ? usage
        : { inputTokens: usage?.inputTokens ?? promptTokensEstimate, outputTokens: Math.max(usage?.outputTokens ?? 0, estimateTokens(outputChars), ending === 'completed' ? 0 : 1) };
      const chargeMicro = chatCost(record, billed);
      if (ending === 'completed') {
        for (let index = 0; index < choices; index++) {
          sink.send(chunkObject({ ...base, index, delta: {}, finishReason: openAIFinishReason(finishReasons[index] ?? finishReason ?? 'stop') }));
        }
        if (includeUsage) sink.send(chunkObject({ ...base, noChoices: true, usage: { ...usageObject(billed), credits_used: microToCredits(chargeMicro) } }));
      }
      if (ending !== 'client_disconnected') sink.send('[DONE]');
      sink.end();
      return { ending, inputTokens: billed.inputTokens, outputTokens: billed.outputTokens, chargeMicro, finishReason, error };
    },
  };
}
