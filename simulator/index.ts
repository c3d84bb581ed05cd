/**
 * The `simulated` provider: every modality served offline and deterministically, with real media bytes,
 * plus failure variants for demos and tests (see README.md beside this file for the grammar).
 */
import type { Provider, ProviderOptions } from '../providers/types';
import { createSimulatedChat } from './chat';
import { createSimulatedEmbedding } from './embedding';
import { createSimulatedImage } from './image';
import { createSimulatedModeration } from './moderation';
import { createSimulatedMusic } from './music';
import { resolveSettings, SimulatedTuning } from './settings';
import { createSimulatedSpeech } from './speech';
import { createSimulatedTranscription } from './transcription';
import { createSimulatedVideo } from './video';

export type { SimulatedTuning } from './settings';
export { simulatedTuningFromEnv } from './settings';
export { readAcceptedSubmissions } from './video-submissions';
export { parseModelVariant, FAILURE_MODES } from './behaviour';
export type { FailureMode } from './behaviour';

export function createSimulatedProvider(options: ProviderOptions, tuning: SimulatedTuning = {}): Provider {
  const settings = resolveSettings(options, tuning);
  return {
    id: options.id,
    family: 'simulated',
    configured: true,
    chat: (model) => createSimulatedChat(model, settings),
    embedding: (model) => createSimulatedEmbedding(model, settings),
    image: (model) => createSimulatedImage(model, settings),
    speech: (model) => createSimulatedSpeech(model, settings),
    transcription: (model) => createSimulatedTranscription(model, settings),
    video: (model) => createSimulatedVideo(model, settings),
    music: (model) => createSimulatedMusic(model, settings),
    moderation: (model) => createSimulatedModeration(model, settings),
  };
}
