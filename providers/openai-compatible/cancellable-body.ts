/**
 * `upstreamFetch`'s deadline covers a stream only up to its headers, and once its `done()` has run the
 * caller's signal no longer reaches the request. A stream body therefore gets its own link to the
 * signal: aborting it errors the body we read and cancels the upstream one, closing the connection.
 */
export function bindBodyToSignal(response: Response, signal: AbortSignal | undefined): Response {
  if (!signal || !response.body) return response;
  const source = response.body.getReader();
  let onAbort = () => {};
  const detach = () => signal.removeEventListener('abort', onAbort);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      onAbort = () => {
        detach();
        controller.error(signal.reason ?? new Error('aborted'));
        source.cancel(signal.reason).catch(() => undefined);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    },
    async pull(controller) {
      try {
        const chunk = await source.read();
        if (signal.aborted) return;
        if (chunk.done) {
          detach();
          controller.close();
        } else {
          controller.enqueue(chunk.value);
        }
      } catch (err) {
        detach();
        if (!signal.aborted) controller.error(err);
      }
    },
    cancel(reason) {
      detach();
      return source.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}
