/**
 * Google Cloud access tokens for Vertex AI from a service account key, through `google-auth-library`'s JWT
 * client: it signs a JWT (RS256, the account's private key) and exchanges it at the OAuth 2.0 token endpoint
 * (the `urn:ietf:params:oauth:grant-type:jwt-bearer` grant), caches the token and asks for a new one five
 * minutes before it expires.
 */
import { JWT } from 'google-auth-library';
import { UpstreamError } from '../../core/errors';
import type { ServiceAccountKey } from '../../core/service-account-key';
import type { CallContext } from '../types';

/** Vertex AI's OAuth scope. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** Google's token endpoint, where the library sends its exchange (and the audience of the JWTs it signs). */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export class VertexTokens {
  private readonly client: JWT;
  private token: string | undefined;

  /** `tokenUrl`: where the exchange goes instead of Google's endpoint (else the key's own `token_uri`). */
  constructor(private readonly provider: string, key: ServiceAccountKey, tokenUrl?: string) {
    this.client = new JWT({
      email: key.client_email, key: key.private_key, keyId: key.private_key_id, scopes: [CLOUD_PLATFORM_SCOPE],
      // A token endpoint that does not answer must not hold the call for gaxios' default of no deadline.
      transporterOptions: { timeout: 30_000 },
    });
    // The library posts to Google's endpoint whatever the key's `token_uri` says; a key minted for another
    // endpoint (a private or test one) is honoured here, on the library's own transporter.
    const target = tokenUrl ?? key.token_uri;
    if (target && target !== GOOGLE_TOKEN_URL) {
      this.client.transporter.interceptors.request.add({
        resolved: (config) => {
          if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(target);
          return Promise.resolve(config);
        },
      });
    }
  }

  /** Makes sure a valid token is at hand (the library's cache answers until five minutes before its expiry). */
  async refresh(_ctx: CallContext): Promise<void> {
    try {
      const { token } = await this.client.getAccessToken();
      if (!token) throw new Error('the token endpoint answered without an access_token');
      this.token = token;
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** The newest token, for the request's `Authorization` header. */
  current(): string {
    if (this.token === undefined) throw new UpstreamError(`${this.provider} has no access token yet`, { kind: 'not_configured', provider: this.provider });
    return this.token;
  }

  /** The token endpoint refused the service account (an operator problem), or could not be reached (transient). */
  private failure(err: unknown): UpstreamError {
    const status = (err as { status?: unknown; response?: { status?: unknown } }).status ?? (err as { response?: { status?: unknown } }).response?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return new UpstreamError(`${this.provider} could not get an access token: the token endpoint refused the service account (${(err as Error).message})`, {
        kind: 'caller_error', provider: this.provider, upstreamStatus: 401, code: 'provider_auth_failed',
      });
    }
    return new UpstreamError(`${this.provider} could not get an access token (the token endpoint did not answer)`, { kind: 'network', provider: this.provider });
  }
}
