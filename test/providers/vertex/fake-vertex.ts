/**
 * A fake Google Cloud on 127.0.0.1 for the Vertex AI provider: an OAuth 2.0 token endpoint that verifies the
 * service account's signed JWT (RS256 against the account's public key, and its iss, aud, scope and times)
 * before it issues a bearer token, and Vertex AI's data plane
 * (`/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`) that answers
 * only that bearer while it lives, as Google's do. The service account's key pair is made here, thrown away
 * with the fake.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeUpstream, type FakeReply, type RecordedRequest } from '../../support/fake-upstream';

export const PROJECT = 'gateway-test-project';
export const LOCATION = 'us-east5';
export const CLIENT_EMAIL = `gateway-sa@${PROJECT}.iam.gserviceaccount.com`;
export const KEY_ID = '3f1c0c2d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49';
/** The audience google-auth-library signs for, and Google's token endpoint accepts. */
export const TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
export const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** Google's answer to a call without a live bearer. */
const UNAUTHENTICATED: FakeReply = {
  status: 401,
  json: { error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', status: 'UNAUTHENTICATED' } },
};

/** One verified assertion: its header and claims as the token endpoint read them. */
export interface VerifiedAssertion {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

export class FakeGoogleCloud {
  readonly data = new FakeUpstream();
  readonly oauth = new FakeUpstream();
  /** Every assertion the token endpoint verified, in order (one per token issued). */
  readonly assertions: VerifiedAssertion[] = [];
  /** Seconds each issued token lives. */
  expiresIn = 3600;
  readonly keyFile: string;
  private readonly publicKey: crypto.KeyObject;
  private readonly privateKeyPem: string;
  private readonly issued = new Map<string, number>();
  private readonly dir: string;

  constructor() {
    const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey;
    this.privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-vertex-'));
    this.keyFile = path.join(this.dir, 'service-account.json');
  }

  async start(): Promise<void> {
    await Promise.all([this.data.start(), this.oauth.start()]);
    this.oauth.on('POST /token', (req) => this.token(req));
    fs.writeFileSync(this.keyFile, JSON.stringify(this.serviceAccount()));
  }

  async stop(): Promise<void> {
    await Promise.all([this.data.stop(), this.oauth.stop()]);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** The service account key file's content, its `token_uri` this fake's endpoint (or `tokenUri`). */
  serviceAccount(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: 'service_account', project_id: PROJECT, private_key_id: KEY_ID, private_key: this.privateKeyPem,
      client_email: CLIENT_EMAIL, client_id: '104242424242424242424', auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: `${this.oauth.url}/token`, universe_domain: 'googleapis.com', ...overrides,
    };
  }

  /** The environment that points the gateway's Vertex provider at this fake. */
  env(): NodeJS.ProcessEnv {
    return { VERTEX_CREDENTIALS_FILE: this.keyFile, VERTEX_LOCATION: LOCATION, VERTEX_BASE_URL: this.data.url };
  }

  /** The model method's path for this fake's project and location. */
  path(publisher: 'google' | 'anthropic', model: string, method: string): string {
    return `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/${publisher}/models/${model}:${method}`;
  }

  /** Answers `POST {path}` with `reply` once the bearer checks out. */
  on(publisher: 'google' | 'anthropic', model: string, method: string, reply: FakeReply | ((req: RecordedRequest) => FakeReply)): void {
    this.data.on(`POST ${this.path(publisher, model, method)}`, (req) => {
      if (!this.isLive(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1])) return UNAUTHENTICATED;
      return typeof reply === 'function' ? reply(req) : reply;
    });
  }

  received(publisher: 'google' | 'anthropic', model: string, method: string): RecordedRequest[] {
    return this.data.received(`POST ${this.path(publisher, model, method)}`);
  }

  /** Expires every token issued so far (as if their hour had passed). */
  expireTokens(): void {
    for (const token of this.issued.keys()) this.issued.set(token, 0);
  }

  private isLive(token: string | undefined): boolean {
    const expires = token === undefined ? undefined : this.issued.get(token);
    return expires !== undefined && expires > Date.now();
  }

  /** The JWT bearer grant (RFC 7523) as Google's endpoint serves it. */
  private token(req: RecordedRequest): FakeReply {
    const form = new URLSearchParams(req.raw.toString('utf8'));
    const refuse = (description: string): FakeReply => ({ status: 400, json: { error: 'invalid_grant', error_description: description } });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return { status: 400, json: { error: 'unsupported_grant_type', error_description: 'Invalid grant_type.' } };
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return refuse('Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.');
    const [headerPart, claimsPart, signature] = parts;
    const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
    const header = decode(headerPart);
    const claims = decode(claimsPart);
    if (header.alg !== 'RS256') return refuse('Invalid JWT Signature.');
    const signed = crypto.verify('RSA-SHA256', Buffer.from(`${headerPart}.${claimsPart}`), this.publicKey, Buffer.from(signature, 'base64url'));
    if (!signed) return refuse('Invalid JWT Signature.');
    const now = Math.floor(Date.now() / 1000);
    const { iss, aud, scope, iat, exp } = claims;
    if (iss !== CLIENT_EMAIL) return refuse('Invalid JWT: iss is not a known service account.');
    if (aud !== TOKEN_AUDIENCE) return refuse('Invalid JWT: aud is not this token endpoint.');
    if (scope !== SCOPE) return { status: 400, json: { error: 'invalid_scope', error_description: 'Invalid OAuth scope or ID token audience provided.' } };
    if (typeof iat !== 'number' || typeof exp !== 'number' || iat > now + 60 || exp <= now || exp - iat > 3600) {
      return refuse('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
    }
    this.assertions.push({ header, claims });
    const token = `ya29.fake-token-${this.assertions.length}`;
    this.issued.set(token, Date.now() + this.expiresIn * 1000);
    return { json: { access_token: token, expires_in: this.expiresIn, token_type: 'Bearer' } };
  }
}
