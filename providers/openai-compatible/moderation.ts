/** `/moderations`: OpenAI's classifier, inputs sent as they came, results read back in order. */
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, ModerationModelAdapter, ModerationRequest, ModerationResult } from '../types';
import { isObject } from './shape';

export class OpenAICompatibleModerationModel implements ModerationModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doModerate(req: ModerationRequest, ctx: CallContext): Promise<{ results: ModerationResult[] }> {
    const provider = this.connection.providerId;
    // Texts go as a list; one multimodal input goes as its list of parts (OpenAI takes one such input per call).
    const input = req.inputs.every((i) => typeof i === 'string') ? req.inputs : req.inputs[0];
    const { body } = await upstreamJson(provider, this.connection.url('/moderations'), this.connection.request(ctx, { json: { model: this.model, input } }));
    expectShape(provider, isObject(body) && Array.isArray(body.results), 'moderation without results');
    const results = body.results as unknown[];
    expectShape(provider, results.every(isResult), 'moderation results without flagged, categories and scores');
    expectShape(provider, results.length === req.inputs.length, `${results.length} moderation results for ${req.inputs.length} inputs`);
    return { results: results as ModerationResult[] };
  }
}

function isResult(value: unknown): boolean {
  return isObject(value) && typeof value.flagged === 'boolean' && isObject(value.categories) && isObject(value.category_scores);
}
