/**
 * Shared HTTP plumbing for provider adapters: one place that turns transport failures and non-2xx
 * answers into classified UpstreamErrors, plus an SSE reader. Adapters never classify errors themselves.
 */
import http from 'node:http';
import https from 'node:https';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { UpstreamError } from '../core/errors';

export interface UpstreamRequest {
  method?: string;
  headers?: Record<string, string>;
  /** JSON bodies are serialized here; Buffers, strings and FormData are sent as they are. */
  json?: unknown;
  body?: RequestInit['body'];
  signal?: AbortSignal;
  /** Deadline for the answer's headers (and, for `readJson`/`readBytes`, its body). Default 60 s. */
  timeoutMs?: number;
}

/** Per-attempt deadline when neither the call, the host nor the family sets one. */
export const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_ERROR_BODY = 64 * 1024;

/** A 2xx answer whose body is still to be read (a stream), and the hooks that end the call. */
export interface UpstreamStream {
  status: number;
  headers: Headers;
  body: AsyncIterable<Uint8Array>;
  /** Must run once the body has been consumed (or given up): the deadline and the cancellation end. */
  done: () => void;
  /** Stops the deadline once the headers arrived (idle time is then bounded by readSse); cancellation stays. */
  endDeadline: () => void;
}

/**
 * Sends one request whose answer is read as it comes (SSE streams). Resolves with a 2xx answer whose body
 * is still unread; throws an UpstreamError for everything else, classified as upstreamJson classifies.
 * Aborting `signal` cancels the request, body included, until `done` runs. A JSON, text or byte body goes
 * through node:http(s) on kept-alive connections (less CPU and an earlier first byte than `fetch`,
 * bench/results/HISTORY.md); a form through `fetch`.
 */
export async function upstreamStream(provider: string, url: string, req: UpstreamRequest = {}): Promise<UpstreamStream> {
  if (isPlainBody(req)) {
    const { status, headers, res, done, endDeadline, endSpan: endCallSpan } = await openPlain(provider, url, req);
    // A stream's span is its wait for the headers: its body may run for minutes.
    endCallSpan(null);
    return { status, headers, body: nodeBody(res), done, endDeadline };
  }
  const { response, done, endDeadline } = await upstreamFetch(provider, url, req);
  return { status: response.status, headers: response.headers, body: webBody(response.body), done, endDeadline };
}

/*
 * A body as readSse reads it: `next` for the next bytes, `return` to give up on the rest at once, even while
 * a read waits (a stream's own async iterator would wait for that read first, forever on a stalled host).
 */
function webBody(stream: ReadableStream<Uint8Array> | null): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const reader = stream?.getReader();
      return {
        next: async () => (reader ? ((await reader.read()) as IteratorResult<Uint8Array>) : { done: true, value: undefined }),
        return: async () => {
          await reader?.cancel().catch(() => undefined);
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** How long the rest of a stream given up on may take to end before its connection is closed. */
const STREAM_DRAIN_MS = 100;

function nodeBody(res: http.IncomingMessage): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const chunks = res[Symbol.asyncIterator]();
      return {
        next: () => chunks.next() as Promise<IteratorResult<Uint8Array>>,
        return: async () => {
          // Given up on once its last event came (the usual case): the rest, its end on its way, is drained,
          // which keeps the connection for the next call. An answer that goes on is cut off.
          if (!res.complete) {
            const cutOff = setTimeout(() => res.destroy(), STREAM_DRAIN_MS);
            res.once('close', () => clearTimeout(cutOff));
          }
          res.on('error', () => undefined).resume();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * Sends one request through `fetch`. Resolves with a 2xx Response whose body is still unread; throws an
 * UpstreamError for everything else. Aborting `signal` cancels the request, body included, until `done`
 * runs. `done` must be called once the body has been consumed.
 */
async function upstreamFetch(provider: string, url: string, req: UpstreamRequest = {}): Promise<{ response: Response; done: () => void; endDeadline: () => void }> {
  const controller = new AbortController();
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; controller.abort(); }, timeoutMs);
  const onAbort = () => controller.abort();
  req.signal?.addEventListener('abort', onAbort, { once: true });
  const endDeadline = () => clearTimeout(timer);
  const done = () => { clearTimeout(timer); req.signal?.removeEventListener('abort', onAbort); };
  if (req.signal?.aborted) controller.abort();

  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  let body = req.body;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] ??= 'application/json';
  }
  let response: Response;
  try {
    response = await fetch(url, { method: req.method ?? (body ? 'POST' : 'GET'), headers, body, signal: controller.signal });
  } catch (err) {
    done();
    throw transportError(provider, err, timedOut, req.signal);
  }
  if (response.ok) {
    return { response, done, endDeadline };
  }
  let text = '';
  try {
    text = await readLimitedText(response, MAX_ERROR_BODY);
  } catch {
    /* the status alone classifies the failure */
  } finally {
    done();
  }
  throw classifyHttpFailure(provider, response.status, response.headers, text);
}

/**
 * Sends a request and parses a JSON answer; a body that is not JSON is a `bad_response`. A JSON, text or
 * byte body goes out through node:http(s) on keep-alive connections (a third of `fetch`'s CPU per call,
 * bench/results/HISTORY.md); a form (multipart uploads) through `fetch`, which encodes it.
 */
export async function upstreamJson<T = unknown>(provider: string, url: string, req: UpstreamRequest = {}): Promise<{ body: T; headers: Headers; status: number }> {
  const { status, headers, text } = isPlainBody(req) ? await sendPlain(provider, url, req) : await fetchText(provider, url, req);
  try {
    return { body: JSON.parse(text) as T, headers, status };
  } catch {
    throw new UpstreamError(`${provider} returned a body that is not JSON`, { kind: 'bad_response', provider, upstreamStatus: status });
  }
}

async function fetchText(provider: string, url: string, req: UpstreamRequest): Promise<{ status: number; headers: Headers; text: string }> {
  const { response, done } = await upstreamFetch(provider, url, req);
  try {
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (err) {
    throw transportError(provider, err, false, req.signal);
  } finally {
    done();
  }
}

function isPlainBody(req: UpstreamRequest): boolean {
  return req.json !== undefined || req.body === undefined || req.body === null || typeof req.body === 'string' || Buffer.isBuffer(req.body);
}

/** Keep-alive connections to upstream hosts, one pool per protocol (sockets idle past 30 s close). */
const agents = {
  'http:': new http.Agent({ keepAlive: true, keepAliveMsecs: 30_000 }),
  'https:': new https.Agent({ keepAlive: true, keepAliveMsecs: 30_000 }),
};

/**
 * One request with a JSON, text or byte body over node:http(s): a 2xx answer's status, headers and text, or
 * the UpstreamError its status or its transport failure classifies as (the same classification as
 * upstreamFetch). The deadline covers the whole answer; aborting `signal` cancels it.
 */
async function sendPlain(provider: string, url: string, req: UpstreamRequest): Promise<{ status: number; headers: Headers; text: string }> {
  const answer = await openPlain(provider, url, req);
  try {
    const text = (await readAll(answer.res)).toString('utf8');
    answer.endSpan(null);
    return { status: answer.status, headers: answer.headers, text };
  } catch (err) {
    const failure = transportError(provider, err, answer.timedOut(), req.signal);
    answer.endSpan(failure);
    throw failure;
  } finally {
    answer.done();
  }
}

/** A body's bytes, up to `limit` (the rest is not read: the answer is cut off there). */
function readAll(res: http.IncomingMessage, limit = Infinity): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size < limit) return;
      resolve(Buffer.concat(chunks).subarray(0, limit));
      res.destroy();
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
    // Closed before its end (a connection cut, or destroyed here): a no-op once it ended.
    res.on('close', () => reject(new Error('the answer was cut off')));
  });
}

/** A JSON, text or byte body's request over node:http(s): where it goes, its method, headers and bytes. */
function plainRequest(url: string, req: UpstreamRequest) {
  const headers: Record<string, string | number> = { ...(req.headers ?? {}) };
  let body: string | Buffer | undefined = (req.body ?? undefined) as string | Buffer | undefined;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const method = req.method ?? (body !== undefined ? 'POST' : 'GET');
  return { target, client, method, headers, body };
}

/** A 2xx answer over node:http(s), its body unread, with its call's hooks. */
interface PlainAnswer extends Omit<UpstreamStream, 'body'> {
  res: http.IncomingMessage;
  /** Whether the deadline ended the call (a body cut off by it is a timeout). */
  timedOut: () => boolean;
  /** Ends the call's client span (tracing on), with the failure reading the body met, if any. */
  endSpan: (failure: Error | null) => void;
}

/**
 * One request over node:http(s), resolved once a 2xx answer's headers arrived, its body still unread; a
 * non-2xx answer, or a failure before the headers, is the UpstreamError it classifies as. The deadline runs
 * until `endDeadline` or `done`; aborting `signal` destroys the request (a body being read then fails) until
 * `done`. The call's client span (tracing on) ends with a failure here, else when the caller says (`endSpan`).
 */
function openPlain(provider: string, url: string, req: UpstreamRequest): Promise<PlainAnswer> {
  const { target, client, method, headers, body } = plainRequest(url, req);
  const span = clientSpan(method, target, headers);
  return new Promise((resolve, reject) => {
    let timedOut = false;
    let settled = false;
    const done = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: unknown) => {
      if (settled) return; // once answered, a failure surfaces from the body being read
      settled = true;
      done();
      const failure = err instanceof UpstreamError ? err : transportError(provider, err, timedOut, req.signal);
      endSpan(span, undefined, failure);
      reject(failure);
    };
    const request = client.request(target, { method, headers, agent: agents[target.protocol as 'http:' | 'https:'] }, (res) => {
      const status = res.statusCode ?? 0;
      const answerHeaders = headersOf(res.headers);
      if (status < 200 || status >= 300) {
        // The status alone classifies the failure when its body cannot be read.
        void readAll(res, MAX_ERROR_BODY).catch(() => Buffer.alloc(0))
          .then((text) => fail(classifyHttpFailure(provider, status, answerHeaders, text.toString('utf8'))));
        return;
      }
      settled = true;
      resolve({
        status, headers: answerHeaders, res, done, endDeadline: () => clearTimeout(timer), timedOut: () => timedOut,
        endSpan: (failure) => endSpan(span, status, failure),
      });
    });
    const onAbort = () => request.destroy(new Error('aborted'));
    const timer = setTimeout(() => { timedOut = true; request.destroy(new Error('timed out')); }, req.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) onAbort();
    request.on('error', fail);
    request.end(body);
  });
}

/**
 * Inside a trace (tracing on: infra/tracing.ts), an HTTP client span for the call, carried to the provider in
 * `traceparent`, as the fetch instrumentation does for calls through fetch; outside one, nothing.
 */
function clientSpan(method: string, target: URL, headers: Record<string, string | number>): Span | null {
  if (!trace.getActiveSpan()) return null;
  const span = trace.getTracer('model-gateway').startSpan(method, {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': method, 'server.address': target.hostname, 'url.path': target.pathname },
  });
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return span;
}

function endSpan(span: Span | null, status: number | undefined, failure: Error | null): void {
  if (!span) return;
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
  span.end();

}

function headersOf(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** Sends a request and returns the answer's bytes. */
export async function upstreamBytes(provider: string, url: string, req: UpstreamRequest = {}): Promise<{ data: Buffer; headers: Headers }> {
  const { response, done } = await upstreamFetch(provider, url, req);
  try {
    return { data: Buffer.from(await response.arrayBuffer()), headers: response.headers };
  } catch (err) {
    throw transportError(provider, err, false, req.signal);
  } finally {
    done();
  }
}

/** The lines of a provider batch's JSONL results, each an object naming its request (`custom_id`). */
export function* batchResultLines(provider: string, data: Buffer): Generator<Record<string, unknown> & { custom_id: string }> {
  for (const text of data.toString('utf8').split('\n')) {
    if (!text.trim()) continue;
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      line = null;
    }
    const named = typeof line === 'object' && line !== null && typeof (line as { custom_id?: unknown }).custom_id === 'string';
    expectShape(provider, named, 'batch result line without a custom_id');
    yield line as Record<string, unknown> & { custom_id: string };
  }
}

/** Throws a `bad_response` UpstreamError unless `ok` holds; adapters call it on every parsed body. */
export function expectShape(provider: string, ok: boolean, what: string): asserts ok {
  if (!ok) throw new UpstreamError(`${provider} returned an unexpected response: ${what}`, { kind: 'bad_response', provider });
}

export function transportError(provider: string, err: unknown, timedOut: boolean, callerSignal?: AbortSignal): UpstreamError {
  if (timedOut) return new UpstreamError(`${provider} did not answer in time`, { kind: 'timeout', provider });
  if (callerSignal?.aborted) return new UpstreamError(`request to ${provider} was cancelled`, { kind: 'network', provider, code: 'upstream_cancelled' });
  // The error's code (ECONNREFUSED ...) when it has one, not its message, which may name an internal address.
  const code = err instanceof Error ? ((err as { cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code) : undefined;
  const reason = code ?? (err instanceof Error ? err.message : String(err));
  return new UpstreamError(`${provider} is unreachable (${reason})`, { kind: 'network', provider });
}

/** Classifies a non-2xx upstream answer exactly once. */
export function classifyHttpFailure(provider: string, status: number, headers: Headers, bodyText: string): UpstreamError {
  const upstreamMessage = extractErrorMessage(bodyText);
  const retryAfterMs = parseRetryAfter(headers) ?? parseBodyRetryDelay(bodyText);
  if (status === 429) {
    return new UpstreamError(`${provider} is rate limiting requests${upstreamMessage ? `: ${upstreamMessage}` : ''}`, {
      kind: 'rate_limited', provider, upstreamStatus: status, retryAfterMs,
    });
  }
  if (status === 408 || status === 504) {
    return new UpstreamError(`${provider} timed out${upstreamMessage ? `: ${upstreamMessage}` : ''}`, { kind: 'timeout', provider, upstreamStatus: status, retryAfterMs });
  }
  if (status >= 500 || status === 409 /* some providers signal transient conflicts/overload this way */ ) {
    return new UpstreamError(`${provider} failed with ${status}${upstreamMessage ? `: ${upstreamMessage}` : ''}`, {
      kind: 'server_error', provider, upstreamStatus: status, retryAfterMs,
    });
  }
  const filtered = status === 400 ? contentFilterVerdict(bodyText) : undefined;
  if (filtered !== undefined) {
    // Azure OpenAI's content filter refused the prompt: the caller's content, named by category.
    return new UpstreamError(`${provider} refused the content under its content filter${filtered ? ` (${filtered})` : ''}`, {
      kind: 'caller_error', provider, upstreamStatus: 400, code: 'content_filtered',
    });
  }
  if (status === 403 && /moderat|content[_ ]?filter|safety/i.test(bodyText)) {
    // Some providers (Stability) answer moderated content with 403: the caller's content, not our key.
    return new UpstreamError(upstreamMessage ? `${provider} refused the content: ${upstreamMessage}` : `${provider} refused the content`, {
      kind: 'caller_error', provider, upstreamStatus: 400, code: 'content_filtered',
    });
  }
  if (status === 401 || status === 403 || (status === 400 && /API_KEY_INVALID|API key not valid/i.test(bodyText))) {
    // Our credentials for the provider were refused: an operator problem, not the caller's.
    return new UpstreamError(`${provider} refused the gateway's credentials`, { kind: 'caller_error', provider, upstreamStatus: status, code: 'provider_auth_failed' });
  }
  return new UpstreamError(upstreamMessage ? `${provider} rejected the request: ${upstreamMessage}` : `${provider} rejected the request (${status})`, {
    kind: 'caller_error', provider, upstreamStatus: status,
  });
}

/**
 * Azure OpenAI's content-filter refusal (`error.code: "content_filter"`, with `innererror.content_filter_result`
 * naming each category and its severity): the filtered categories as text ('' when none are named), or
 * undefined when the body is not such a refusal.
 */
export function contentFilterVerdict(bodyText: string): string | undefined {
  let error: unknown;
  try {
    error = (JSON.parse(bodyText) as { error?: unknown }).error;
  } catch {
    return undefined;
  }
  if (!error || typeof error !== 'object') return undefined;
  const { code, innererror } = error as { code?: unknown; innererror?: { code?: unknown; content_filter_result?: unknown } };
  if (code !== 'content_filter' && innererror?.code !== 'ResponsibleAIPolicyViolation') return undefined;
  const result = innererror?.content_filter_result;
  if (!result || typeof result !== 'object') return '';
  return Object.entries(result as Record<string, unknown>)
    .filter(([, verdict]) => !!verdict && typeof verdict === 'object' && (verdict as { filtered?: unknown }).filtered === true)
    .map(([category, verdict]) => {
      const severity = (verdict as { severity?: unknown }).severity;
      return typeof severity === 'string' ? `${category}: ${severity}` : category;
    })
    .join(', ');
}

/** Retry-After as seconds or an HTTP date, and the `retry-after-ms` some providers send. */
export function parseRetryAfter(headers: Headers): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = headers.get('retry-after');
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (!Number.isNaN(date)) return Math.max(0, date - Date.now());
  return null;
}

/** Google's APIs put the retry delay in the body (`RetryInfo.retryDelay`, e.g. "12s"), not in a header. */
function parseBodyRetryDelay(bodyText: string): number | null {
  const m = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(bodyText);
  return m ? Math.round(Number(m[1]) * 1000) : null;
}

/** Pulls a human message out of the error shapes providers use, trimmed and stripped of control chars. */
export function extractErrorMessage(bodyText: string): string {
  if (!bodyText) return '';
  let message = '';
  try {
    const body = JSON.parse(bodyText) as Record<string, unknown>;
    const error = body.error;
    if (typeof error === 'string') message = error;
    else if (error && typeof error === 'object' && typeof (error as Record<string, unknown>).message === 'string') message = (error as Record<string, string>).message;
    else if (typeof body.message === 'string') message = body.message;
    else if (typeof body.detail === 'string') message = body.detail;
    else if (body.detail && typeof body.detail === 'object' && typeof (body.detail as Record<string, unknown>).message === 'string') message = (body.detail as Record<string, string>).message;
    else if (Array.isArray(body.detail) && typeof body.detail[0]?.msg === 'string') message = body.detail.map((d: { msg?: string }) => d.msg ?? '').join('; ');
    else if (Array.isArray(body.errors) && body.errors.length) message = body.errors.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('; ');
    else if (Array.isArray(body) && body[0] && typeof body[0].error?.message === 'string') message = body[0].error.message;
  } catch {
    message = bodyText.trimStart().startsWith('<') ? '' : bodyText;
  }
  return sanitizeMessage(message);
}

export function sanitizeMessage(message: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = message.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return clean.length > 500 ? `${clean.slice(0, 497)}...` : clean;
}

async function readLimitedText(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= limit) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

export interface SseEvent {
  event: string | null;
  data: string;
  id: string | null;
}

/**
 * Reads a text/event-stream body (upstreamStream's) as events. `idleTimeoutMs` bounds the silence between chunks so a
 * stalled upstream ends as a `timeout` instead of hanging forever.
 */
export async function* readSse(provider: string, body: AsyncIterable<Uint8Array>, opts: { idleTimeoutMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<SseEvent> {
  const reader = body[Symbol.asyncIterator]();
  let finished = false;
  const decoder = new TextDecoder();
  const idleTimeoutMs = opts.idleTimeoutMs ?? 120_000;
  let buffer = '';
  let event: string | null = null;
  let id: string | null = null;
  let data: string[] = [];
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new UpstreamError(`${provider} stream stalled`, { kind: 'timeout', provider })), idleTimeoutMs);
      });
      let chunk: IteratorResult<Uint8Array>;
      try {
        chunk = await Promise.race([reader.next(), idle]);
      } catch (err) {
        if (err instanceof UpstreamError) throw err;
        throw transportError(provider, err, false, opts.signal);
      } finally {
        clearTimeout(timer);
      }
      if (chunk.done) {
        finished = true;
        break;
      }
      buffer += decoder.decode(chunk.value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0 || event !== null) yield { event, data: data.join('\n'), id };
          event = null;
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id') id = value;
      }
    }
    if (data.length > 0) yield { event, data: data.join('\n'), id };
  } finally {
    // A body left unread is given up on; one read to its end needs nothing more.
    if (!finished) await reader.return?.().catch(() => undefined);
  }
}

/** Parses one SSE data payload as JSON, classifying garbage as `bad_response`. */
export function parseSseJson<T = unknown>(provider: string, data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new UpstreamError(`${provider} sent a stream event that is not JSON`, { kind: 'bad_response', provider });
  }
}
