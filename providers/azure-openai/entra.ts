/**
 * Microsoft Entra ID bearer tokens for Azure OpenAI (client credentials through `@azure/identity`'s
 * ClientSecretCredential, which caches each token and asks for a new one before it expires).
 */
import https from 'node:https';
import { ClientSecretCredential } from '@azure/identity';
import { UpstreamError } from '../../core/errors';
import type { CallContext } from '../types';

/** The audience of Azure OpenAI (Cognitive Services) tokens. */
export const AZURE_OPENAI_SCOPE = 'https://cognitiveservices.azure.com/.default';

export interface EntraOptions {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The authority (`https://login.microsoftonline.com` by default; a sovereign cloud's or a private one's). */
  authorityHost?: string;
  /** PEM certificates to trust for the authority, besides the system's (an authority behind a private CA). */
  authorityCaPem?: string;
}

export class EntraTokens {
  private readonly credential: ClientSecretCredential;
  private token: string | undefined;

  constructor(private readonly provider: string, options: EntraOptions) {
    this.credential = new ClientSecretCredential(options.tenantId, options.clientId, options.clientSecret, {
      ...(options.authorityHost ? { authorityHost: options.authorityHost, disableInstanceDiscovery: true } : {}),
      ...(options.authorityCaPem ? { agent: new https.Agent({ ca: options.authorityCaPem, keepAlive: true }) } : {}),
    });
  }

  /** Makes sure a valid token is at hand (the library's cache answers until it nears its expiry). */
  async refresh(ctx: CallContext): Promise<void> {
    try {
      const token = await this.credential.getToken(AZURE_OPENAI_SCOPE, { abortSignal: ctx.signal });
      this.token = token.token;
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** The newest token, for the request's `Authorization` header. */
  current(): string {
    if (this.token === undefined) throw new UpstreamError(`${this.provider} has no Entra ID token yet`, { kind: 'not_configured', provider: this.provider });
    return this.token;
  }

  /** The authority refused our client (an operator problem), or could not be reached (transient). */
  private failure(err: unknown): UpstreamError {
    const status = (err as { statusCode?: unknown }).statusCode;
    const refused = (typeof status === 'number' && status >= 400 && status < 500)
      || (err instanceof Error && /^Authentication(Required)?Error$/.test(err.name) && /invalid_client|unauthorized_client|invalid_scope|AADSTS\d+/.test(err.message));
    if (refused) {
      return new UpstreamError(`${this.provider} could not get an Entra ID token: the authority refused the gateway's client credentials`, {
        kind: 'caller_error', provider: this.provider, upstreamStatus: 401, code: 'provider_auth_failed',
      });
    }
    return new UpstreamError(`${this.provider} could not get an Entra ID token (the authority did not answer)`, { kind: 'network', provider: this.provider });
  }
}
