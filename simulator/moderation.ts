/**
 * Simulated moderation in OpenAI's 13 categories. Text is flagged by keywords (a word list per category,
 * so a demo can trigger each one: "kill" flags violence, "hate you" harassment, ...); scores are seeded
 * small numbers otherwise. Images (data URLs; remote ones are not fetched) are judged on the categories
 * OpenAI judges images on, and an image that is mostly red counts as graphic violence.
 */
import sharp from 'sharp';
import type { CallContext, ModerationModelAdapter, ModerationPart, ModerationRequest, ModerationResult } from '../providers/types';
import { activeFailure, enact, malformedAnswer, parseModelVariant } from './behaviour';
import { prng, seedFrom } from './seed';
import type { SimulatedSettings } from './settings';

const KEYWORDS: Record<string, string[]> = {
  harassment: ['hate you', 'idiot', 'loser', 'stupid'],
  'harassment/threatening': ['i will hurt you', 'watch your back'],
  hate: ['subhuman', 'vermin'],
  'hate/threatening': ['exterminate them'],
  illicit: ['steal a car', 'shoplift', 'pick a lock'],
  'illicit/violent': ['build a bomb', 'make a weapon'],
  'self-harm': ['hurt myself', 'self-harm'],
  'self-harm/intent': ['want to die', 'end my life'],
  'self-harm/instructions': ['how to cut myself'],
  sexual: ['explicit sex', 'nsfw'],
  'sexual/minors': ['sexual minor'],
  violence: ['kill', 'murder', 'attack'],
  'violence/graphic': ['gore', 'blood everywhere'],
};

export const MODERATION_CATEGORIES = Object.keys(KEYWORDS);

/** The categories OpenAI's omni model also judges images on. */
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);

const FLAG_AT = 0.5;

export function createSimulatedModeration(upstreamModel: string, settings: SimulatedSettings): ModerationModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  return {
    async doModerate(req: ModerationRequest, ctx: CallContext): Promise<{ results: ModerationResult[] }> {
      const outcome = await enact(settings.provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      if (outcome === 'malformed') throw malformedAnswer(settings.provider);
      return { results: await Promise.all(req.inputs.map((input) => classify(typeof input === 'string' ? [{ type: 'text', text: input }] : input))) };
    },
  };
}

async function classify(parts: ModerationPart[]): Promise<ModerationResult> {
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n').toLowerCase();
  const images = parts.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : []));
  const redImage = (await Promise.all(images.map(isMostlyRed))).some(Boolean);
  const random = prng(seedFrom('moderation', text, images));
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const [category, words] of Object.entries(KEYWORDS)) {
    const hit = words.some((w) => new RegExp(`\\b${w}\\b`).test(text)) || (redImage && category === 'violence/graphic');
    scores[category] = round(hit ? 0.85 + random() * 0.14 : random() * 0.01);
    applied[category] = [...(text ? ['text'] : []), ...(images.length > 0 && IMAGE_CATEGORIES.has(category) ? ['image'] : [])];
  }
  const categories = Object.fromEntries(Object.entries(scores).map(([c, s]) => [c, s >= FLAG_AT]));
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores, category_applied_input_types: applied };
}

async function isMostlyRed(url: string): Promise<boolean> {
  const match = /^data:[^;,]*;base64,(.*)$/s.exec(url);
  if (!match) return false;
  try {
    const { channels } = await sharp(Buffer.from(match[1], 'base64')).stats();
    const [r, g, b] = channels.map((c) => c.mean);
    return r > 1.5 * g && r > 1.5 * b;
  } catch {
    return false;
  }
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
