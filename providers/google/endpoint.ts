/**
 * One configured Gemini API host: URLs, the `x-goog-api-key` header and deadlines, shared by every
 * modality adapter of the family.
 */
import { UpstreamError } from '../../core/errors';
import type { CallContext, ProviderOptions } from '../types';

export class GoogleEndpoint {
  readonly provider: string;
  private readonly base: string;

  constructor(private readonly options: ProviderOptions) {
    this.provider = options.id;
    // Accept base URLs given with or without the API version suffix.
    this.base = options.baseUrl.replace(/\/+$/, '').replace(/\/v1(beta)?$/, '');
  }

  get configured(): boolean {
    return Boolean(this.options.apiKey);
  }

  /** `/v1beta/<path>` on this host. */
  url(path: string): string {
    return `${this.base}/v1beta/${path.replace(/^\/+/, '')}`;
  }

  /** `models/<id>:<method>`; catalog ids may or may not carry the `models/` prefix. */
  modelUrl(model: string, method: string): string {
    return this.url(`models/${encodeURIComponent(model.replace(/^models\//, ''))}:${method}`);
  }

  /** Request headers with the key; throws `not_configured` without one. */
  headers(): Record<string, string> {
    return { ...(this.options.headers ?? {}), 'x-goog-api-key': this.requireKey() };
  }

  /**
   * Headers for downloading a file the API pointed us to: the key goes only to this host, never to a
   * URL on another origin.
   */
  downloadHeaders(url: string): Record<string, string> {
    return new URL(url).origin === new URL(this.base).origin ? this.headers() : {};
  }

  timeoutMs(ctx: CallContext): number | undefined {
    return ctx.timeoutMs ?? this.options.timeoutMs;
  }

  requireKey(): string {
    if (!this.options.apiKey) throw new UpstreamError(`${this.provider} is not configured (no API key)`, { kind: 'not_configured', provider: this.provider });
    return this.options.apiKey;
  }
}
