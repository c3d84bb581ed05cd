/**
 * `n` choices from any chat adapter: one call asking for them all where the host answers several choices
 * natively, otherwise `n` calls of one choice each (each charged for its own tokens, as the host bills
 * them). Streams of fanned-out choices follow one another, each part naming its choice.
 */
import type { CallContext, ChatChoice, ChatModelAdapter, ChatRequest, ChatResult, ChatStreamPart, FinishReason } from '../../providers/types';

export async function generateChoices(adapter: ChatModelAdapter, req: ChatRequest, n: number, ctx: CallContext): Promise<ChatResult> {
  if (n <= 1) return adapter.doGenerate(withoutN(req), ctx);
  if (adapter.nativeChoices) return adapter.doGenerate({ ...req, n }, ctx);
  const results = await Promise.all(Array.from({ length: n }, () => adapter.doGenerate(withoutN(req), ctx)));
  const [first, ...rest] = results;
  const moreChoices = rest.map((result): ChatChoice => {
    const { content, toolCalls, finishReason, logprobs } = result;
    return { content, toolCalls, finishReason, ...(logprobs ? { logprobs } : {}) };
  });
  return {
    ...first,
    usage: {
      inputTokens: results.reduce((sum, r) => sum + r.usage.inputTokens, 0),
      outputTokens: results.reduce((sum, r) => sum + r.usage.outputTokens, 0),
    },
    moreChoices,
  };
}

export function streamChoices(adapter: ChatModelAdapter, req: ChatRequest, n: number, ctx: CallContext): AsyncIterable<ChatStreamPart> {
  if (n <= 1) return adapter.doStream(withoutN(req), ctx);
  if (adapter.nativeChoices) return adapter.doStream({ ...req, n }, ctx);
  return fannedOutStream(adapter, withoutN(req), n, ctx);
}

async function* fannedOutStream(adapter: ChatModelAdapter, req: ChatRequest, n: number, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
  const reasons: FinishReason[] = [];
  const usage = { inputTokens: 0, outputTokens: 0 };
  for (let choice = 0; choice < n; choice++) {
    for await (const part of adapter.doStream(req, ctx)) {
      if (part.type === 'finish') {
        reasons.push(part.finishReason);
        usage.inputTokens += part.usage.inputTokens;
        usage.outputTokens += part.usage.outputTokens;
      } else {
        yield { ...part, choice };
      }
    }
  }
  yield { type: 'finish', finishReason: reasons[0], usage, finishReasons: reasons };
}

function withoutN(req: ChatRequest): ChatRequest {
  const { n: _n, ...rest } = req;
  return rest;
}
