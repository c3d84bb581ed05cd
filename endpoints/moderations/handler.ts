/**
 * `POST /v1/moderations` as an endpoint handler: priced by input tokens (text at about four characters a
 * token, an image as 85 tokens, OpenAI's low-detail count); OpenAI's own moderation models cost nothing.
 */
import { embeddingCost } from '../../catalog/pricing';
import { InvalidRequestError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import type { ModerationPart } from '../../providers/types';
import { estimateTokens } from '../chat/tokens';
import { callContext } from '../media';
import { modelAdapter } from '../model-adapter';
import type { EndpointHandler } from '../types';
import { moderationInputs, type ModerationBody } from './body';

const TOKENS_PER_IMAGE = 85;

function inputTokens(body: ModerationBody): number {
  return moderationInputs(body).reduce((sum, input) => sum + (typeof input === 'string' ? estimateTokens(input.length) : partTokens(input)), 0);
}

function partTokens(parts: ModerationPart[]): number {
  return parts.reduce((sum, p) => sum + (p.type === 'text' ? estimateTokens(p.text.length) : TOKENS_PER_IMAGE), 0);
}

export function moderationId(requestId: string): string {
  return `modr-${requestId.replace(/-/g, '')}`;
}

export const moderationsHandler: EndpointHandler<ModerationBody> = {
  endpoint: 'moderations',
  modality: 'moderation',

  check(record, body) {
    const images = moderationInputs(body).some((input) => typeof input !== 'string' && input.some((p) => p.type === 'image_url'));
    if (images && !record.capabilities.vision) {
      throw new InvalidRequestError(`Model '${record.slug}' moderates text only; send images to a model that takes them (omni-moderation-latest, sim-moderation).`, { param: 'input', code: 'image_not_supported_by_model' });
    }
  },

  estimate(record, body) {
    return embeddingCost(record, { inputTokens: inputTokens(body) });
  },

  async call(record, body, env) {
    const { results } = await modelAdapter(env, record, 'moderation').doModerate({ inputs: moderationInputs(body) }, callContext(env));
    const tokens = inputTokens(body);
    const chargeMicro = embeddingCost(record, { inputTokens: tokens });
    return {
      response: { kind: 'json', body: { id: moderationId(env.requestId), model: record.slug, results, credits_used: microToCredits(chargeMicro) } },
      chargeMicro,
      usage: { inputTokens: tokens, outputTokens: 0 },
    };
  },
};
