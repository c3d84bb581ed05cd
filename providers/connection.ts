/**
 * One configured host of a wire family, built once per provider from its ProviderOptions: the base URL
 * (trailing slashes trimmed here and nowhere else), the API key check, the per-attempt deadline and the
 * request headers in the family's auth style. Model classes take a Connection instead of the options.
 */
import { UpstreamError } from '../core/errors';
import { DEFAULT_TIMEOUT_MS, type UpstreamRequest } from './http';
import type { CallContext, Provider, ProviderOptions } from './types';

type HeaderMap = Record<string, string>;

/** What differs between wire families in how they reach a host. */
export interface ConnectionSpec {
  family: string;
  /** The header that carries the key: see `bearerAuth` and `keyHeaderAuth`. */
  auth: (apiKey: string) => HeaderMap;
  /**
   * Where the auth header goes relative to the host's configured headers. `after-host` (the default): the
   * key always wins. `before-host`: a host header of the same name replaces it (OpenAI-compatible hosts).
   */
  authPlacement?: 'before-host' | 'after-host';
  /** Family headers sent first (API version pins); the host's configured headers may replace them. */
  defaultHeaders?: HeaderMap;
  /** Lower-cases the names of host and per-request headers, so one of any case replaces a default. */
  lowerCaseHeaderNames?: boolean;
  /** A version suffix the family's paths add themselves, dropped from base URLs given with it. */
  versionSuffix?: RegExp;
  /** Per-attempt deadline when neither the call nor the host sets one. */
  defaultTimeoutMs?: number;
  /** Query parameters every request URL carries (Azure OpenAI's `api-version`). */
  query?: Record<string, string>;
}

/** `authorization: Bearer <key>`. */
export const bearerAuth = (apiKey: string): HeaderMap => ({ authorization: `Bearer ${apiKey}` });

/** The bare key in a named header (`x-api-key`, `x-goog-api-key`, ...). */
export const keyHeaderAuth = (name: string) => (apiKey: string): HeaderMap => ({ [name]: apiKey });

export class Connection {
  readonly providerId: string;
  readonly family: string;
  /** False without an API key: the provider's models are then reported unavailable. */
  readonly configured: boolean;
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly hostHeaders: HeaderMap;
  private readonly defaultTimeoutMs: number | undefined;

  constructor(options: ProviderOptions, private readonly spec: ConnectionSpec) {
    this.providerId = options.id;
    this.family = spec.family;
    this.apiKey = options.apiKey || undefined;
    this.configured = this.apiKey !== undefined;
    const trimmed = options.baseUrl.replace(/\/+$/, '');
    this.baseUrl = spec.versionSuffix ? trimmed.replace(spec.versionSuffix, '') : trimmed;
    this.hostHeaders = this.names(options.headers ?? {});
    this.defaultTimeoutMs = options.timeoutMs ?? spec.defaultTimeoutMs;
  }

  /** `path` (with its leading slash) on this host. */
  url(path: string): string {
    const query = this.spec.query ? new URLSearchParams(this.spec.query).toString() : '';
    return query ? `${this.baseUrl}${path}${path.includes('?') ? '&' : '?'}${query}` : `${this.baseUrl}${path}`;
  }

  /** Whether `url` points at this host, so it may be sent the key (downloads the API pointed us to). */
  isOwnUrl(url: string): boolean {
    return new URL(url).origin === new URL(this.baseUrl).origin;
  }

  /** Throws the `not_configured` UpstreamError when the host has no key; before anything is sent. */
  assertConfigured(): void {
    this.key();
  }

  /** Every request's headers: family defaults, the host's own, the key, then `extra`. */
  headers(extra: HeaderMap = {}): HeaderMap {
    const auth = this.spec.auth(this.key());
    const hostFirst = this.spec.authPlacement !== 'before-host';
    return {
      ...(hostFirst ? {} : auth),
      ...(this.spec.defaultHeaders ?? {}),
      ...this.hostHeaders,
      ...(hostFirst ? auth : {}),
      ...this.names(extra),
    };
  }

  /** The call's deadline for one attempt: the caller's, else the host's, else the family's. */
  timeoutMs(ctx: CallContext): number | undefined {
    return ctx.timeoutMs ?? this.defaultTimeoutMs;
  }

  /** When a call made of several requests must be done (the shared default applies when none is set). */
  deadline(ctx: CallContext): number {
    return Date.now() + (this.timeoutMs(ctx) ?? DEFAULT_TIMEOUT_MS);
  }

  /** Options for one request of a call: its headers with the key, cancellation and deadline. */
  request(ctx: CallContext, init: UpstreamRequest = {}): UpstreamRequest {
    return { signal: ctx.signal, timeoutMs: this.timeoutMs(ctx), ...init, headers: this.headers(init.headers) };
  }

  private key(): string {
    if (this.apiKey === undefined) {
      throw new UpstreamError(`${this.providerId} is not configured (no API key)`, { kind: 'not_configured', provider: this.providerId });
    }
    return this.apiKey;
  }

  private names(headers: HeaderMap): HeaderMap {
    if (!this.spec.lowerCaseHeaderNames) return headers;
    return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  }
}

/** A family's Provider: the connection's identity and configured flag, plus its model factories. */
export function defineProvider(connection: Connection, models: Omit<Provider, 'id' | 'family' | 'configured'>): Provider {
  return { id: connection.providerId, family: connection.family, configured: connection.configured, ...models };
}
