/**
 * The legacy `POST /v1/completions` on chat models: each prompt becomes one user message, and its
 * answer(s) the completion's text. With several prompts, choice `i` of prompt `p` has index `p * n + i`,
 * as OpenAI numbers them. Log probabilities come from the chat model's and are reshaped into the legacy
 * lists (`tokens`, `token_logprobs`, `top_logprobs`, `text_offset`).
 */
import { chatCost } from '../../catalog/pricing';
import { microToCredits } from '../../core/money';
import type { ChatChoice, ChatLogprobs } from '../../providers/types';
import type { ChatCompletionBody } from '../chat/body';
import { checkChatRequest, estimateChat, generateChat } from '../chat/handler';
import { openAIFinishReason, resultChoices, usageObject } from '../chat/response';
import type { EndpointHandler } from '../types';
import { DEFAULT_COMPLETION_MAX_TOKENS, type CompletionBody } from './body';

export function prompts(body: CompletionBody): string[] {
  return Array.isArray(body.prompt) ? body.prompt : [body.prompt];
}

/** The chat request one prompt makes (nulls dropped, as the chat endpoint treats them). */
export function chatBodyFor(body: CompletionBody, prompt: string): ChatCompletionBody {
  const fields: Record<string, unknown> = {
    max_tokens: body.max_tokens ?? DEFAULT_COMPLETION_MAX_TOKENS,
    temperature: body.temperature, top_p: body.top_p, n: body.n, stop: body.stop, seed: body.seed,
    presence_penalty: body.presence_penalty, frequency_penalty: body.frequency_penalty, logit_bias: body.logit_bias, user: body.user,
    ...(body.logprobs != null ? { logprobs: true, top_logprobs: body.logprobs } : {}),
  };
  const set = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null));
  return { model: body.model, messages: [{ role: 'user', content: prompt }], ...set };
}

export function completionId(requestId: string): string {
  return `cmpl-${requestId.replace(/-/g, '')}`;
}

/** OpenAI's legacy logprobs object for one choice's text. */
function legacyLogprobs(logprobs: ChatLogprobs | undefined, offsetBase: number) {
  const tokens = logprobs?.content ?? [];
  let offset = offsetBase;
  const textOffset = tokens.map((t) => {
    const at = offset;
    offset += t.token.length;
    return at;
  });
  return {
    tokens: tokens.map((t) => t.token),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) => Object.fromEntries(t.top_logprobs.map((top) => [top.token, top.logprob]))),
    text_offset: textOffset,
  };
}

function completionChoice(body: CompletionBody, prompt: string, choice: ChatChoice, index: number) {
  const echo = body.echo ? prompt : '';
  return {
    text: `${echo}${choice.content ?? ''}`,
    index,
    logprobs: body.logprobs != null ? legacyLogprobs(choice.logprobs, echo.length) : null,
    finish_reason: openAIFinishReason(choice.finishReason),
  };
}

export const completionsHandler: EndpointHandler<CompletionBody> = {
  endpoint: 'completions',
  modality: 'chat',

  check(record, body) {
    checkChatRequest(record, chatBodyFor(body, prompts(body)[0]));
  },

  estimate(record, body) {
    return prompts(body).reduce((sum, prompt) => sum + estimateChat(record, chatBodyFor(body, prompt)), 0);
  },

  async call(record, body, env) {
    const answers = await Promise.all(prompts(body).map((prompt) => generateChat(record, chatBodyFor(body, prompt), env)));
    const n = body.n ?? 1;
    const choices = answers.flatMap(({ result }, p) => resultChoices(result).map((choice, i) => completionChoice(body, prompts(body)[p], choice, p * n + i)));
    const usage = {
      inputTokens: answers.reduce((sum, a) => sum + a.result.usage.inputTokens, 0),
      outputTokens: answers.reduce((sum, a) => sum + a.result.usage.outputTokens, 0),
    };
    // One charge for the whole request, rounded once.
    const chargeMicro = chatCost(record, usage);
    return {
      response: {
        kind: 'json',
        body: {
          id: completionId(env.requestId), object: 'text_completion', created: env.created, model: record.slug,
          choices, usage: usageObject(usage), credits_used: microToCredits(chargeMicro),
        },
      },
      chargeMicro,
      usage,
    };
  },
};
