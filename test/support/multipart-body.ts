/**
 * Hand-built multipart/form-data bodies, for what the official client never sends: raw control characters
 * in a filename, fields in a chosen order, or a body streamed without a Content-Length.
 */
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { getSharedStack } from './stack';

export type FormPart =
  | { name: string; value: string }
  | { name: string; filename: string; contentType?: string; data: Buffer; encodeFilename?: boolean };

export function multipartBody(parts: FormPart[]): { body: Buffer; contentType: string } {
  const boundary = `----gatewaytest${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      // RFC 5987 `filename*` carries any character (control characters included) percent-encoded.
      const filename = part.encodeFilename ? `filename*=UTF-8''${encodeURIComponent(part.filename)}` : `filename="${part.filename}"`;
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; ${filename}\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`));
      chunks.push(part.data, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A body as a stream in small pieces, so fetch sends it chunked (no Content-Length). */
export function chunkedStream(body: Buffer, pieceBytes = 4096): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= body.length) {
        controller.close();
        return;
      }
      controller.enqueue(new Uint8Array(body.subarray(offset, offset + pieceBytes)));
      offset += pieceBytes;
    },
  });
}

/** Keys stored in the test stack's bucket under a prefix (what really is in MinIO). */
export async function listStoredKeys(prefix: string): Promise<string[]> {
  const { s3 } = await getSharedStack();
  const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: s3.forcePathStyle, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  try {
    const out = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
    return (out.Contents ?? []).map((o) => o.Key!).sort();
  } finally {
    client.destroy();
  }
}
