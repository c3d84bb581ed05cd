/**
 * What every adapter of the family shares: the host's base URL and credentials, the per-call request
 * options (auth headers, deadline, cancellation), and the not-configured guard.
 */
import { UpstreamError } from '../../core/errors';
import type { UpstreamRequest } from '../http';
import type { CallContext, ProviderOptions } from '../types';

/** A test on the upstream model id, or one answer for every model of the host. */
export type ModelSwitch = boolean | ((upstreamModel: string) => boolean);

export interface OpenAICompatibleOptions extends ProviderOptions {
  /**
   * Send `max_completion_tokens` instead of `max_tokens` (OpenAI's reasoning models refuse the latter;
   * many other hosts only know the latter).
   */
  useMaxCompletionTokens?: ModelSwitch;
  /**
   * Ask for `response_format=json` instead of `verbose_json` on transcriptions, for models that refuse
   * verbose output (durations then come from `usage.seconds` when the host reports it).
   */
  plainJsonTranscription?: ModelSwitch;
}

export class OpenAICompatibleClient {
  private readonly baseUrl: string;

  constructor(readonly options: OpenAICompatibleOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  get providerId(): string {
    return this.options.id;
  }

  get configured(): boolean {
    return typeof this.options.apiKey === 'string' && this.options.apiKey.length > 0;
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  appliesTo(flag: ModelSwitch | undefined, upstreamModel: string): boolean {
    return typeof flag === 'function' ? flag(upstreamModel) : flag === true;
  }

  /** Request options for one call; throws `not_configured` when the host has no credentials. */
  request(ctx: CallContext, extra: Omit<UpstreamRequest, 'signal' | 'timeoutMs'>): UpstreamRequest {
    if (!this.configured) {
      throw new UpstreamError(`${this.providerId} is not configured (no API key)`, { kind: 'not_configured', provider: this.providerId });
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}` };
    // Host-specific headers (organization ids, API version pins) may also replace the default auth.
    for (const [name, value] of Object.entries(this.options.headers ?? {})) headers[name.toLowerCase()] = value;
    for (const [name, value] of Object.entries(extra.headers ?? {})) headers[name.toLowerCase()] = value;
    return { ...extra, headers, signal: ctx.signal, timeoutMs: ctx.timeoutMs ?? this.options.timeoutMs };
  }
}
