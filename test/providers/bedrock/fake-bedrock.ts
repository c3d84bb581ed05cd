/**
 * A fake Amazon Bedrock runtime and a fake AWS STS on 127.0.0.1, speaking AWS's wire formats: Converse
 * (JSON), ConverseStream (the AWS event-stream binary framing, encoded with @smithy/eventstream-codec) and
 * InvokeModel on the runtime; AssumeRole (query form in, XML out) on STS. Both verify every request's SigV4
 * signature by computing it again with the same credentials (@smithy/signature-v4) over the request as
 * received, and refuse a mismatch, an unknown key or an expired one with AWS's own 403 errors. Credentials
 * STS issues are then what the runtime accepts.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { FakeUpstream, type FakeReply, type RecordedRequest } from '../../support/fake-upstream';

export const REGION = 'us-east-1';
export const ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
export const SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
export const ROLE_ARN = 'arn:aws:iam::123456789012:role/gateway-bedrock';

export interface Credentials { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expires?: number }

/** What a received request was signed with, once its signature checked out. */
export interface Verified { credentials: Credentials; region: string; service: string; signedHeaders: string[] }

/** The keys both fakes accept, by access key id (the long-term key, and what STS issued). */
export class Keyring {
  private readonly keys = new Map<string, Credentials>([[ACCESS_KEY_ID, { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY }]]);

  add(credentials: Credentials): void {
    this.keys.set(credentials.accessKeyId, credentials);
  }

  /** The request's signature computed again; an AWS error reply when it is not one of ours, or does not match. */
  async verify(req: RecordedRequest, service: string, host: string): Promise<Verified | FakeReply> {
    const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(req.headers.authorization ?? '');
    if (!auth) return awsError(service, 403, 'IncompleteSignatureException', 'Authorization header requires \'Credential\', \'Signature\' and \'SignedHeaders\' parameters.');
    const [, accessKeyId, , region, signedService, signedHeaderList, signature] = auth;
    const credentials = this.keys.get(accessKeyId);
    if (!credentials) return awsError(service, 403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    if (credentials.expires !== undefined && credentials.expires < Date.now()) return awsError(service, 403, 'ExpiredTokenException', 'The security token included in the request is expired');
    if (signedService !== service || region !== REGION) {
      return awsError(service, 403, 'InvalidSignatureException', `Credential should be scoped to correct service: '${service}' and region '${REGION}'.`);
    }
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    if (Number.isNaN(signingDate.getTime()) || Math.abs(signingDate.getTime() - Date.now()) > 5 * 60_000) {
      return awsError(service, 403, 'InvalidSignatureException', 'Signature expired or not yet current.');
    }
    const signedHeaders = signedHeaderList.split(';');
    if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date')) {
      return awsError(service, 403, 'InvalidSignatureException', 'The request must sign host and x-amz-date.');
    }
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) {
      const value = req.headers[name];
      headers[name] = Array.isArray(value) ? value.join(',') : String(value ?? '');
    }
    const [hostname, port] = host.split(':');
    const query: Record<string, string | string[]> = {};
    for (const key of new Set(req.query.keys())) {
      const values = req.query.getAll(key);
      query[key] = values.length === 1 ? values[0] : values;
    }
    const signer = new SignatureV4({ credentials, region, service, sha256: Sha256 });
    const expected = await signer.sign(
      { method: req.method, protocol: 'http:', hostname, port: Number(port), path: req.path, query, headers, body: req.raw },
      { signingDate },
    );
    if (expected.headers.authorization !== req.headers.authorization) {
      return awsError(service, 403, 'InvalidSignatureException', 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.');
    }
    return { credentials, region, service, signedHeaders };
  }
}

/** AWS's error shape: JSON with `x-amzn-errortype` for the runtime, query-protocol XML for STS. */
function awsError(service: string, status: number, type: string, message: string): FakeReply {
  if (service === 'sts') {
    return { status, headers: { 'content-type': 'text/xml' }, body: `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">\n  <Error>\n    <Type>Sender</Type>\n    <Code>${type}</Code>\n    <Message>${message}</Message>\n  </Error>\n  <RequestId>4e0c3bb4-1f44-4f2a-9d8e-6f1f0c2b8f11</RequestId>\n</ErrorResponse>\n` };
  }
  return bedrockError(status, type, message);
}

/** One of Bedrock's errors as the runtime answers it. */
export function bedrockError(status: number, type: string, message: string): FakeReply {
  return { status, headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'f2b5b1a4-8f83-4e2c-9e55-0d7d9c2b1a11' }, json: { message } };
}

const utf8 = { to: (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8'), from: (text: string) => new Uint8Array(Buffer.from(text, 'utf8')) };
const codec = new EventStreamCodec(utf8.to, utf8.from);

/** A ConverseStream event: its type and payload, or an exception frame (`exception` set). */
export type StreamEvent = [type: string, payload: Record<string, unknown>] | { exception: string; message: string };

/** ConverseStream's answer: each event one binary frame, as Bedrock sends them. */
export function eventStream(events: StreamEvent[]): FakeReply {
  const frames = events.map((event) => {
    const headers = Array.isArray(event)
      ? { ':event-type': event[0], ':content-type': 'application/json', ':message-type': 'event' }
      : { ':exception-type': event.exception, ':content-type': 'application/json', ':message-type': 'exception' };
    // Bedrock pads each event's payload with `p` so sizes do not give the text away.
    const payload = Array.isArray(event) ? { ...event[1], p: 'abcdefghijklmnopqrstuvwxyzABCDEF'.slice(0, 7) } : { message: event.message };
    return codec.encode({
      headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }])),
      body: utf8.from(JSON.stringify(payload)),
    });
  });
  return { headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'c0a3d7e1-55b2-4f6e-8a9d-3b1e2f4a5c6d' }, body: Buffer.concat(frames) };
}

type Operation = 'converse' | 'converse-stream' | 'invoke';
type Handler = (req: RecordedRequest, verified: Verified) => FakeReply;

export class FakeBedrock {
  readonly keys = new Keyring();
  readonly runtime = new FakeUpstream();
  readonly sts = new FakeUpstream();
  /** Every AssumeRole form STS received, in order. */
  readonly assumed: URLSearchParams[] = [];
  /** Seconds each issued credential lives; `refuseRole` makes STS answer AccessDenied. */
  expiresIn = 3600;
  refuseRole = false;
  private readonly handlers = new Map<string, Handler>();
  /** What each runtime request was signed with, in order. */
  readonly verified: Verified[] = [];

  async start(): Promise<void> {
    await Promise.all([this.runtime.start(), this.sts.start()]);
    this.routes();
  }

  async stop(): Promise<void> {
    await Promise.all([this.runtime.stop(), this.sts.stop()]);
  }

  reset(): void {
    this.runtime.reset();
    this.sts.reset();
    this.handlers.clear();
    this.assumed.length = 0;
    this.verified.length = 0;
    this.refuseRole = false;
    this.routes();
  }

  /** Answers `POST /model/{modelId}/{operation}` once the signature checks out. */
  on(modelId: string, operation: Operation, reply: FakeReply | Handler): void {
    this.handlers.set(`${modelId} ${operation}`, typeof reply === 'function' ? reply : () => reply);
  }

  received(modelId: string, operation: Operation): RecordedRequest[] {
    return this.runtime.received(`POST /model/${encodeURIComponent(modelId)}/${operation}`);
  }

  /** The environment that points the gateway's Bedrock provider at this fake: static keys, or a role. */
  env(auth: 'keys' | 'role'): NodeJS.ProcessEnv {
    const base = { BEDROCK_REGION: REGION, BEDROCK_BASE_URL: this.runtime.url, BEDROCK_ACCESS_KEY_ID: ACCESS_KEY_ID, BEDROCK_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY };
    if (auth === 'keys') return base;
    return { ...base, BEDROCK_ROLE_ARN: ROLE_ARN, BEDROCK_ROLE_SESSION_NAME: 'gateway-test', BEDROCK_STS_ENDPOINT: this.sts.url };
  }

  private routes(): void {
    this.runtime.on('POST /model/*', async (req) => {
      const verified = await this.keys.verify(req, 'bedrock', new URL(this.runtime.url).host);
      if (!('credentials' in verified)) return verified;
      this.verified.push(verified);
      const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(req.path);
      const handler = match ? this.handlers.get(`${decodeURIComponent(match[1])} ${match[2]}`) : undefined;
      if (!handler) return bedrockError(400, 'ValidationException', 'The provided model identifier is invalid.');
      return handler(req, verified);
    });
    this.sts.on('POST /', async (req) => {
      const verified = await this.keys.verify(req, 'sts', new URL(this.sts.url).host);
      if (!('credentials' in verified)) return verified;
      const form = new URLSearchParams(req.raw.toString('utf8'));
      this.assumed.push(form);
      if (form.get('Action') !== 'AssumeRole' || form.get('Version') !== '2011-06-15') return awsError('sts', 400, 'InvalidAction', 'Could not find operation');
      if (this.refuseRole || form.get('RoleArn') !== ROLE_ARN) {
        return awsError('sts', 403, 'AccessDenied', `User: arn:aws:iam::123456789012:user/gateway is not authorized to perform: sts:AssumeRole on resource: ${form.get('RoleArn')}`);
      }
      const n = this.assumed.length;
      const issued: Credentials = {
        accessKeyId: `ASIAFAKESTS${String(n).padStart(9, '0')}`, secretAccessKey: `temporary-secret-${n}-0123456789abcdef`,
        sessionToken: `FwoGZXIvYXdzEFAKE//session-token-${n}`, expires: Date.now() + this.expiresIn * 1000,
      };
      this.keys.add(issued);
      return {
        headers: { 'content-type': 'text/xml' },
        body: `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:${form.get('RoleSessionName')}</AssumedRoleId>
      <Arn>arn:aws:sts::123456789012:assumed-role/gateway-bedrock/${form.get('RoleSessionName')}</Arn>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${issued.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${issued.secretAccessKey}</SecretAccessKey>
      <SessionToken>${issued.sessionToken}</SessionToken>
      <Expiration>${new Date(issued.expires!).toISOString()}</Expiration>
    </Credentials>
  </AssumeRoleResult>
  <ResponseMetadata>
    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
  </ResponseMetadata>
</AssumeRoleResponse>
`,
      };
    });
  }
}
