/**
 * Simulated embeddings: unit vectors built from the words of the text (each word adds its own seeded
 * random direction) plus a little of the whole text's own direction, so identical texts match exactly,
 * texts sharing words are closer than unrelated ones, and no two different texts collide.
 */
import type { CallContext, EmbeddingModelAdapter, EmbeddingRequest, EmbeddingResult } from '../providers/types';
import { activeFailure, enact, malformedAnswer, parseModelVariant, rejectRequest } from './behaviour';
import { countTokens, prng, seedFrom } from './seed';
import type { SimulatedSettings } from './settings';

export const NATIVE_DIMENSIONS = 256;
const WHOLE_TEXT_WEIGHT = 0.35;

export function createSimulatedEmbedding(upstreamModel: string, settings: SimulatedSettings): EmbeddingModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  const { provider } = settings;
  return {
    // Token ids embed as the words of their decimal text: the same ids give the same vector.
    tokenInput: true,
    async doEmbed(req: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult> {
      const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      const dimensions = req.dimensions ?? NATIVE_DIMENSIONS;
      if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > NATIVE_DIMENSIONS) {
        throw rejectRequest(provider, upstreamModel, `'dimensions' must be an integer between 1 and ${NATIVE_DIMENSIONS}.`);
      }
      const texts = req.tokens ? req.tokens.map((ids) => ids.join(' ')) : req.input;
      if (texts.length === 0) throw rejectRequest(provider, upstreamModel, "'input' must not be empty.");
      if (outcome === 'malformed') throw malformedAnswer(provider);
      return {
        embeddings: texts.map((text) => embedText(text, dimensions)),
        usage: { inputTokens: req.tokens ? req.tokens.reduce((sum, ids) => sum + ids.length, 0) : texts.reduce((sum, text) => sum + countTokens(text), 0) },
      };
    },
  };
}

/** The unit vector for `text`, truncated to `dimensions` and renormalized (as shortened OpenAI embeddings are). */
export function embedText(text: string, dimensions = NATIVE_DIMENSIONS): number[] {
  const vector = new Float64Array(NATIVE_DIMENSIONS);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) addDirection(vector, seedFrom('word', word), 1);
  addDirection(vector, seedFrom('text', text), WHOLE_TEXT_WEIGHT);
  const kept = Array.from(vector.subarray(0, dimensions));
  const norm = Math.hypot(...kept) || 1;
  return kept.map((value) => value / norm);
}

function addDirection(into: Float64Array, seed: number, weight: number): void {
  const random = prng(seed);
  for (let i = 0; i < into.length; i += 2) {
    // Box-Muller: two independent normal values per step.
    const radius = Math.sqrt(-2 * Math.log(1 - random()));
    const angle = 2 * Math.PI * random();
    into[i] += weight * radius * Math.cos(angle);
    if (i + 1 < into.length) into[i + 1] += weight * radius * Math.sin(angle);
  }
}
