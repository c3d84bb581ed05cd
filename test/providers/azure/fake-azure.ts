/**
 * A fake Azure OpenAI resource on 127.0.0.1: the data plane (`/openai/deployments/{deployment}/...`) over HTTP,
 * refusing any request without the right `api-key` (or a bearer token its authority issued) or without
 * `api-version`, as Azure does; and a fake Microsoft Entra ID authority over HTTPS (its own throwaway CA)
 * serving OpenID discovery and the client-credentials token endpoint.
 */
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { makeLocalCertificates } from '../../../stack/tls-certs';
import { FakeUpstream, type FakeReply, type RecordedRequest } from '../../support/fake-upstream';

export const AZURE_KEY = 'azure-test-key-0123456789';
export const API_VERSION = '2024-10-21';
export const TENANT = 'tenant-1';
export const CLIENT_ID = 'client-1';
export const CLIENT_SECRET = 'client-secret-1';

/** Azure's answer to a request without valid credentials. */
const UNAUTHORIZED: FakeReply = { status: 401, json: { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } } };
const NO_VERSION: FakeReply = { status: 404, json: { error: { code: '404', message: 'Resource not found' } } };

export class FakeAzure {
  readonly data = new FakeUpstream();
  readonly authority = new FakeAuthority();

  async start(): Promise<void> {
    await Promise.all([this.data.start(), this.authority.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.data.stop(), this.authority.stop()]);
  }

  /** Answers `POST /openai/deployments/{deployment}/{operation}` with `reply` once the credentials and api-version check out. */
  on(deployment: string, operation: string, reply: FakeReply | ((req: RecordedRequest) => FakeReply)): void {
    this.data.on(`POST /openai/deployments/${deployment}/${operation}`, (req) => {
      if (!this.authorized(req)) return UNAUTHORIZED;
      if (req.query.get('api-version') !== API_VERSION) return NO_VERSION;
      return typeof reply === 'function' ? reply(req) : reply;
    });
  }

  received(deployment: string, operation: string): RecordedRequest[] {
    return this.data.received(`POST /openai/deployments/${deployment}/${operation}`);
  }

  /** The environment that points the gateway's Azure provider at this fake, with an API key or with Entra ID. */
  env(auth: 'key' | 'entra'): NodeJS.ProcessEnv {
    const base = { AZURE_OPENAI_ENDPOINT: this.data.url, AZURE_OPENAI_API_VERSION: API_VERSION };
    if (auth === 'key') return { ...base, AZURE_OPENAI_API_KEY: AZURE_KEY };
    return {
      ...base, AZURE_TENANT_ID: TENANT, AZURE_CLIENT_ID: CLIENT_ID, AZURE_CLIENT_SECRET: CLIENT_SECRET,
      AZURE_AUTHORITY_HOST: this.authority.url, AZURE_AUTHORITY_CA_FILE: this.authority.caPath,
    };
  }

  private authorized(req: RecordedRequest): boolean {
    if (req.headers['api-key'] !== undefined) return req.headers['api-key'] === AZURE_KEY;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    return bearer !== undefined && this.authority.isLive(bearer);
  }
}

/** A Microsoft Entra ID authority for one tenant and one confidential client. */
export class FakeAuthority {
  /** Every token request's form, in order. */
  readonly tokenRequests: URLSearchParams[] = [];
  /** Seconds each issued token lives. */
  expiresIn = 3600;
  caPath = '';
  private server: https.Server | null = null;
  private readonly issued = new Map<string, number>();
  private dir = '';

  get url(): string {
    return `https://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** A token this authority issued and that has not expired. */
  isLive(token: string): boolean {
    const expires = this.issued.get(token);
    return expires !== undefined && expires > Date.now();
  }

  async start(): Promise<void> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-entra-'));
    const certs = makeLocalCertificates(this.dir, 'login.fake-entra.local');
    this.caPath = certs.caPath;
    this.server = https.createServer({ cert: fs.readFileSync(certs.serverCertPath), key: fs.readFileSync(certs.serverKeyPath) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', this.url);
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        const tenantBase = `${this.url}/${TENANT}`;
        if (req.method === 'GET' && url.pathname === `/${TENANT}/v2.0/.well-known/openid-configuration`) {
          return send(200, {
            issuer: `${tenantBase}/v2.0`, token_endpoint: `${tenantBase}/oauth2/v2.0/token`,
            authorization_endpoint: `${tenantBase}/oauth2/v2.0/authorize`, end_session_endpoint: `${tenantBase}/oauth2/v2.0/logout`,
            jwks_uri: `${this.url}/${TENANT}/discovery/v2.0/keys`, response_types_supported: ['code', 'id_token', 'token'],
          });
        }
        if (req.method === 'POST' && url.pathname === `/${TENANT}/oauth2/v2.0/token`) {
          const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
          this.tokenRequests.push(form);
          if (form.get('grant_type') !== 'client_credentials' || form.get('client_id') !== CLIENT_ID || form.get('client_secret') !== CLIENT_SECRET) {
            return send(401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.', error_codes: [7000215] });
          }
          if (form.get('scope') !== 'https://cognitiveservices.azure.com/.default') return send(400, { error: 'invalid_scope', error_description: 'AADSTS70011: invalid scope' });
          const token = `entra-token-${this.tokenRequests.length}`;
          this.issued.set(token, Date.now() + this.expiresIn * 1000);
          return send(200, { token_type: 'Bearer', expires_in: this.expiresIn, ext_expires_in: this.expiresIn, access_token: token });
        }
        return send(404, { error: 'not_found' });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
