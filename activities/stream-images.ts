/**
 * The image call of a streamed image request. It runs on the task queue of the API process holding the
 * client's connection: the first time it runs it commits the 200 event stream, then it reports progress as
 * SSE comments (`: image_generation in_progress model=... attempt=...`: OpenAI's stream has no progress
 * event, and clients skip comments) as the call starts and every couple of seconds while it runs,
 * heartbeating alongside. The call itself is the ordinary model call (the same
 * handler as the synchronous endpoint), so retries, fallback and settlement stay in the workflow and the
 * final event is written by the API from the workflow's settled result.
 */
import { activityInfo, ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { StreamRegistry } from './stream-registry';
import type { ActivityDeps } from './deps';
import { createRequestActivities, type CallInput, type CallResult } from './requests';

export interface ImageProgressCallInput extends CallInput {
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
  const requests = createRequestActivities(deps);
  return {
    async callImageModelWithProgress(input: ImageProgressCallInput): Promise<CallResult> {
      const sink = deps.streams.get(input.requestId);
      if (!sink || sink.clientGone) {
        throw ApplicationFailure.create({ type: CLIENT_DISCONNECTED, message: 'The client closed the stream before the model was called.', nonRetryable: true });
      }
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
        return await requests.callModel(input);
      } finally {
        clearInterval(timer);
      }
    },
  };
}
