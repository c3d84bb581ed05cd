/**
 * Object storage (S3 or MinIO): the bucket holds uploaded files, generated media and video results.
 * Signed GET URLs let clients fetch results without our API in the path.
 */
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand,
  GetBucketLifecycleConfigurationCommand, PutBucketLifecycleConfigurationCommand,
  GetObjectCommand, HeadBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';

// The lockfile pins an SDK release that supports Node 20; its notice about future releases is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Prefixes of per-request objects and how many days the store keeps them (idempotent replays need a day). */
export const TRANSIENT_PREFIXES = [
  { prefix: 'requests/', days: 2 },
  { prefix: 'results/', days: 2 },
  { prefix: 'uploads/', days: 1 },
];

export interface StorageConfig {
  endpoint: string;
  /** Host clients use for signed URLs when it differs from the one we talk to (behind a proxy). */
  publicEndpoint?: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
  forcePathStyle: boolean;
}

export class ObjectStorage {
  readonly bucket: string;
  private readonly client: S3Client;
  private readonly signer: S3Client;

  constructor(readonly config: StorageConfig) {
    this.bucket = config.bucket;
    const credentials = { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey };
    this.client = new S3Client({ endpoint: config.endpoint, region: config.region, credentials, forcePathStyle: config.forcePathStyle });
    this.signer = config.publicEndpoint
      ? new S3Client({ endpoint: config.publicEndpoint, region: config.region, credentials, forcePathStyle: config.forcePathStyle })
      : this.client;
  }

  /**
   * Creates the bucket if it is missing. A process does not need it to start (chat never touches storage):
   * the runtime tries at boot without waiting, and the first write into a missing bucket creates it.
   */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch {
      try {
        await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
      } catch (err) {
        const name = (err as { name?: string }).name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
      }
    }
    await this.expireTransientObjects();
  }

  /**
   * Request bodies, uploads held for one request and per-request results are transient: the store expires
   * them (left behind only when a process died mid-request). Files and videos are kept until deleted.
   * Stores without lifecycle support keep them; that only costs space.
   */
  private async expireTransientObjects(): Promise<void> {
    const rule = (prefix: string, days: number) => ({ ID: `expire-${prefix.replace('/', '')}`, Status: 'Enabled' as const, Filter: { Prefix: prefix }, Expiration: { Days: days } });
    try {
      await this.client.send(new PutBucketLifecycleConfigurationCommand({
        Bucket: this.bucket,
        LifecycleConfiguration: { Rules: TRANSIENT_PREFIXES.map(({ prefix, days }) => rule(prefix, days)) },
      }));
    } catch {
      /* not supported by this store */
    }
  }

  async lifecycleRules(): Promise<Array<{ prefix: string; days: number }>> {
    const out = await this.client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: this.bucket }));
    return (out.Rules ?? []).map((r) => ({ prefix: r.Filter?.Prefix ?? r.Prefix ?? '', days: r.Expiration?.Days ?? 0 }));
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async put(key: string, body: Buffer | Readable, opts: { contentType: string; contentLength?: number; metadata?: Record<string, string> }): Promise<void> {
    const send = () => this.client.send(new PutObjectCommand({
      Bucket: this.bucket, Key: key, Body: body, ContentType: opts.contentType, ContentLength: opts.contentLength, Metadata: opts.metadata,
    }));
    // Only a buffer can be sent again once the bucket exists; a stream was consumed by the first try.
    await (Buffer.isBuffer(body) ? this.intoBucket(send) : send());
  }

  /** Runs a write, creating the bucket and writing again when the bucket does not exist yet. */
  private async intoBucket<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if ((err as { name?: string }).name !== 'NoSuchBucket') throw err;
      await this.ensureBucket();
      return write();
    }
  }

  /**
   * Stores a stream of unknown length without holding it whole: up to one part (8 MiB) is buffered at a
   * time; a body that fits in one part is a single PUT, a longer one a multipart upload (aborted, leaving
   * nothing behind, when the stream fails). Resolves with the stored size.
   */
  async putStream(key: string, body: AsyncIterable<Buffer | Uint8Array>, opts: { contentType: string; partBytes?: number }): Promise<{ bytes: number }> {
    const partBytes = Math.max(opts.partBytes ?? 8 * 1024 * 1024, 5 * 1024 * 1024);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let total = 0;
    let uploadId: string | undefined;
    const parts: Array<{ ETag?: string; PartNumber: number }> = [];
    const flushPart = async () => {
      uploadId ??= (await this.intoBucket(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: opts.contentType })))).UploadId;
      const PartNumber = parts.length + 1;
      const out = await this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber, Body: Buffer.concat(pending) }));
      parts.push({ ETag: out.ETag, PartNumber });
      pending = [];
      pendingBytes = 0;
    };
    try {
      for await (const chunk of body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        pending.push(buffer);
        pendingBytes += buffer.length;
        total += buffer.length;
        if (pendingBytes >= partBytes) await flushPart();
      }
      if (uploadId === undefined) {
        await this.put(key, Buffer.concat(pending), { contentType: opts.contentType, contentLength: pendingBytes });
        return { bytes: total };
      }
      if (pendingBytes > 0) await flushPart();
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
      return { bytes: total };
    } catch (err) {
      if (uploadId !== undefined) {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      }
      throw err;
    }
  }

  async get(key: string): Promise<{ body: Readable; contentType?: string; contentLength?: number }> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return { body: out.Body as Readable, contentType: out.ContentType, contentLength: out.ContentLength };
  }

  async getBuffer(key: string): Promise<Buffer> {
    const { body } = await this.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** A signed GET URL valid for `expiresInSeconds` (S3 caps it at 7 days). */
  async signedUrl(key: string, expiresInSeconds: number, opts: { filename?: string; contentType?: string } = {}): Promise<string> {
    return getSignedUrl(this.signer, new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: opts.contentType,
      ResponseContentDisposition: opts.filename ? `inline; filename="${opts.filename.replace(/["\\\r\n]/g, '_')}"` : undefined,
    }), { expiresIn: Math.min(expiresInSeconds, 7 * 24 * 3600) });
  }
}
