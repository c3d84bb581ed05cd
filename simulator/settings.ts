/**
 * Knobs of the simulated provider. Each can be set in code (the factory's second argument, for tests)
 * or through the host's configured headers (`x-sim-*`, so an operator can tune a demo without code).
 */
import type { ProviderOptions } from '../providers/types';
import type { Timing } from './behaviour';
import { VideoSubmissions } from './video-submissions';

export interface SimulatedTuning {
  /** Pause between streamed chat deltas (default 15 ms). */
  streamDelayMs?: number;
  /** How long a video job stays `processing` after submission (default 3000 ms). */
  videoReadyMs?: number;
  /** How long `slow` variants wait before answering (default 1500 ms). */
  slowDelayMs?: number;
  /** Clock used for video jobs (tests pin it). */
  now?: () => number;
  /** Where the provider keeps what must outlive the process (video submissions by idempotency key); absent: memory. */
  stateDir?: string;
}

export interface SimulatedSettings extends Timing {
  provider: string;
  streamDelayMs: number;
  videoReadyMs: number;
  now: () => number;
  submissions: VideoSubmissions;
}

export const DEFAULT_TIMEOUT_MS = 60_000;

export function resolveSettings(options: ProviderOptions, tuning: SimulatedTuning = {}): SimulatedSettings {
  const header = (name: string): number | undefined => {
    const raw = options.headers?.[name];
    const value = raw === undefined ? NaN : Number(raw);
    return Number.isFinite(value) && value >= 0 ? value : undefined;
  };
  return {
    provider: options.id,
    defaultTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    streamDelayMs: tuning.streamDelayMs ?? header('x-sim-stream-delay-ms') ?? 15,
    videoReadyMs: tuning.videoReadyMs ?? header('x-sim-video-ms') ?? 3000,
    slowDelayMs: tuning.slowDelayMs ?? header('x-sim-slow-ms') ?? 1500,
    now: tuning.now ?? Date.now,
    submissions: new VideoSubmissions(tuning.stateDir ?? options.headers?.['x-sim-state-dir']),
  };
}

/** The knobs for a gateway process started on its own (`SIMULATED_STREAM_DELAY_MS`, `SIMULATED_VIDEO_MS`, `SIMULATED_STATE_DIR`). */
export function simulatedTuningFromEnv(env: NodeJS.ProcessEnv): SimulatedTuning {
  const number = (name: string) => (env[name] && Number.isFinite(Number(env[name])) ? Number(env[name]) : undefined);
  return { streamDelayMs: number('SIMULATED_STREAM_DELAY_MS'), videoReadyMs: number('SIMULATED_VIDEO_MS'), stateDir: env.SIMULATED_STATE_DIR || undefined };
}
