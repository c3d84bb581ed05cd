/**
 * Fetches a client-supplied URL without letting the client aim the gateway at its own network (SSRF):
 * http(s) only, no credentials in the URL, every address the name resolves to must be allowed (public
 * unicast by default, infra/ip-policy.ts), and the connection goes to the address that was checked (the
 * check runs inside the socket's own DNS lookup, so a second resolution cannot swap in another address).
 * Redirects are followed a few times, each target checked the same way. Size, content type and time are
 * bounded; the body is held in memory, so `maxBytes` must stay small.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isPublicAddress } from './ip-policy';

export type FetchRefusal = 'invalid_url' | 'forbidden_address' | 'too_large' | 'unsupported_type' | 'fetch_failed' | 'timeout' | 'too_many_redirects';

export class SafeFetchError extends Error {
  constructor(readonly reason: FetchRefusal, message: string) {
    super(message);
    this.name = 'SafeFetchError';
  }
}

export interface SafeFetchOptions {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Whether a response's content type (lower case, no parameters) is acceptable. */
  accept(contentType: string): boolean;
  /** Which addresses may be connected to; default: public unicast only. Tests widen it for a local server. */
  isAllowedAddress?: (address: string) => boolean;
  /** A POST (webhooks) instead of a GET; a POST never follows redirects. */
  post?: { body: string | Buffer; headers: Record<string, string> };
  /** Request headers of a GET (default: asks for images). */
  headers?: Record<string, string>;
}

/** A non-2xx answer (the status is kept so callers can report it). */
export class HttpStatusError extends SafeFetchError {
  constructor(readonly status: number, body: string) {
    super('fetch_failed', `The URL answered with HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ''}.`);
  }
}

export interface SafeFetchResult {
  data: Buffer;
  contentType: string;
  /** The URL finally read (after redirects). */
  url: string;
}

type Answer = SafeFetchResult | { redirect: string };

export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const deadline = Date.now() + opts.timeoutMs;
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const answer = await fetchOnce(current, opts, deadline);
    if (!('redirect' in answer)) return answer;
    if (opts.post || redirects >= opts.maxRedirects) throw new SafeFetchError('too_many_redirects', `More than ${opts.maxRedirects} redirects.`);
    current = new URL(answer.redirect, current).toString();
  }
}

/**
 * Whether a URL could be fetched, without fetching it: the same rules as `safeFetch` (scheme, no
 * credentials, every address the host resolves to allowed). For URLs stored now and fetched later
 * (webhooks), so a refusal comes when the URL is given; the fetch checks again, as the name may move.
 */
export async function checkTargetUrl(url: string, opts: { isAllowedAddress?: (address: string) => boolean; timeoutMs?: number } = {}): Promise<URL> {
  const allowed = opts.isAllowedAddress ?? isPublicAddress;
  const { parsed, host } = parseTarget(url, allowed);
  if (net.isIP(host)) return parsed;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SafeFetchError('fetch_failed', `${host} could not be resolved in time.`)), opts.timeoutMs ?? 5_000);
  });
  try {
    const addresses = await Promise.race([dns.promises.lookup(host, { all: true, verbatim: true }), timeout]).catch((err) => {
      if (err instanceof SafeFetchError) throw err;
      throw new SafeFetchError('fetch_failed', `${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
    });
    const refusal = refusedAddresses(host, addresses, allowed);
    if (refusal) throw refusal;
    return parsed;
  } finally {
    clearTimeout(timer);
  }
}

/** The URL if its form may be fetched (http(s), no credentials, a literal address only if allowed). */
function parseTarget(url: string, allowed: (address: string) => boolean): { parsed: URL; host: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SafeFetchError('invalid_url', 'Not a valid absolute URL.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new SafeFetchError('invalid_url', 'Only http and https URLs can be fetched.');
  if (parsed.username || parsed.password) throw new SafeFetchError('invalid_url', 'URLs with credentials are not fetched.');
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address never reaches a name lookup, so it is checked here.
  if (net.isIP(host) && !allowed(host)) throw forbidden(host, host);
  return { parsed, host };
}

/** The refusal for a name whose addresses are not all allowed (or that has none), else null. */
function refusedAddresses(hostname: string, addresses: dns.LookupAddress[], allowed: (address: string) => boolean): SafeFetchError | null {
  const refused = addresses.find((a) => !allowed(a.address));
  return refused || addresses.length === 0 ? forbidden(hostname, refused?.address ?? 'nothing') : null;
}

function fetchOnce(url: string, opts: SafeFetchOptions, deadline: number): Promise<Answer> {
  const allowed = opts.isAllowedAddress ?? isPublicAddress;
  let parsed: URL;
  try {
    ({ parsed } = parseTarget(url, allowed));
  } catch (err) {
    return Promise.reject(err);
  }

  const lookup = (hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err);
      const refusal = refusedAddresses(hostname, addresses, allowed);
      if (refusal) return callback(refusal);
      const usable = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
      if (usable.length === 0) return callback(new SafeFetchError('fetch_failed', `${hostname} has no address of the family asked for.`));
      if (options.all) return callback(null, usable);
      return callback(null, usable[0].address, usable[0].family);
    });
  };

  return new Promise<Answer>((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      reject(new SafeFetchError('timeout', 'The URL did not answer in time.'));
      return;
    }
    const client = parsed.protocol === 'https:' ? https : http;
    // agent: false, so no pooled socket (connected to an address checked earlier) is reused.
    const headers = opts.post
      ? { ...opts.post.headers, 'content-length': String(Buffer.byteLength(opts.post.body)) }
      : opts.headers ?? { accept: 'image/*', 'user-agent': 'model-gateway (reference fetch)' };
    const req = client.request(parsed, { method: opts.post ? 'POST' : 'GET', agent: false, lookup: lookup as any, headers }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        resolve({ redirect: res.headers.location });
        return;
      }
      if (status < 200 || status >= 300) {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => { if (body.length < 500) body += chunk; });
        res.on('end', () => reject(new HttpStatusError(status, body)));
        res.on('error', () => reject(new HttpStatusError(status, body)));
        return;
      }
      const contentType = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (!opts.accept(contentType)) {
        res.destroy();
        reject(new SafeFetchError('unsupported_type', `The URL's content type '${contentType || 'none'}' is not accepted.`));
        return;
      }
      if (Number(res.headers['content-length']) > opts.maxBytes) {
        res.destroy();
        reject(new SafeFetchError('too_large', `The URL's content is larger than ${opts.maxBytes} bytes.`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) {
          res.destroy();
          reject(new SafeFetchError('too_large', `The URL's content is larger than ${opts.maxBytes} bytes.`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ data: Buffer.concat(chunks), contentType, url: parsed.toString() }));
      res.on('error', (err) => reject(new SafeFetchError('fetch_failed', err.message)));
    });
    const timer = setTimeout(() => req.destroy(new SafeFetchError('timeout', 'The URL did not answer in time.')), remaining);
    req.on('error', (err) => reject(err instanceof SafeFetchError ? err : new SafeFetchError('fetch_failed', `The URL could not be fetched (${(err as NodeJS.ErrnoException).code ?? err.message}).`)));
    req.on('close', () => clearTimeout(timer));
    req.end(opts.post?.body);
  });
}

function forbidden(host: string, address: string): SafeFetchError {
  return new SafeFetchError('forbidden_address', `${host} resolves to ${address}, which is not a public address; only public hosts can be fetched.`);
}
