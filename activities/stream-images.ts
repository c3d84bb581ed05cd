/**
 * The image hop of a streamed image request. It runs on the task queue of the API process holding the
 * client's connection and is the same hop as the synchronous endpoint's (hold, call, settle:
 * activities/hop.ts); once the credits are held it commits the 200 event stream (a refused hold is returned
 * before, so the API can still answer with the error's status), then it reports progress as SSE comments
 * (`: image_generation in_progress model=... attempt=...`: OpenAI's stream has no progress event, and
 * clients skip comments) as the call starts and every couple of seconds while it runs, heartbeating
 * alongside. Retries and fallback stay in the workflow, and the final event is written by the API from the
 * workflow's result.
 */
import { activityInfo, ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { StreamRegistry } from './stream-registry';
import type { ActivityDeps } from './deps';
import { callModel, hopSteps, type ServeHopInput, type ServeHopResult } from './requests';
import { serveHop } from './hop';

export interface ImageHopInput extends ServeHopInput {
  fallbackFrom: string | null;
  fallbackDepth: number;
}

/** How often a running call reports progress (and keeps proxies from closing an idle stream). */
export const PROGRESS_INTERVAL_MS = 2_000;

/** The ApplicationFailure type of a stream whose client left before the model was called. */
export const CLIENT_DISCONNECTED = 'ClientDisconnected';

export function imageEventPrefix(endpoint: string): 'image_edit' | 'image_generation' {
  return endpoint === 'images.edits' ? 'image_edit' : 'image_generation';
}

export function createImageStreamActivities(deps: ActivityDeps & { streams: StreamRegistry }) {
  return {
    async serveImageHopWithProgress(input: ImageHopInput): Promise<ServeHopResult> {
      const sink = deps.streams.get(input.requestId);
      if (!sink || sink.clientGone) {
        throw ApplicationFailure.create({ type: CLIENT_DISCONNECTED, message: 'The client closed the stream before the model was called.', nonRetryable: true });
      }
      return serveHop(input, hopSteps(deps, input, async () => {
        // Credits are held by now, so the status can be committed: later errors are stream events.
        sink.start({});
        const startedAt = Date.now();
        const { attempt } = activityInfo();
        const fallback = input.fallbackFrom ? ` fallback_from=${input.fallbackFrom} fallback_depth=${input.fallbackDepth}` : '';
        const report = () => {
          sink.comment(`${imageEventPrefix(input.endpoint)} in_progress model=${input.model} attempt=${attempt} elapsed_ms=${Date.now() - startedAt}${fallback}`);
          heartbeat();
        };
        report();
        const timer = setInterval(report, PROGRESS_INTERVAL_MS);
        try {
          return await callModel(deps, input);
        } finally {
          clearInterval(timer);
        }
      }));
    },
  };
}
